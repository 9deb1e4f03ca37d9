package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"reconcile"
)

// lockSpace is the first half of the two-key advisory locks that guard a
// channel and business date, so they cannot collide with other users of
// advisory locks in the same database.
const lockSpace = 0x5245434f // "RECO"

// RunLock is the right to run one channel and business date: a session
// advisory lock on a connection of its own. The lock dies with the
// connection, so a run killed outright (SIGKILL, a lost machine) frees it
// at once; the run record's lease covers a holder that is alive but stuck
// or cut off, whose connection the server still believes in.
type RunLock struct {
	conn *pgxpool.Conn
	pid  uint32
	key  string
}

// PID is the server process holding the lock, recorded on the run so a
// successor can end it once the lease has expired.
func (l *RunLock) PID() uint32 { return l.pid }

// LockRun waits until it holds the lock of channel and day. While another
// run holds it, that run's lease is watched: once it has expired, the
// holder's server process is terminated and its run recorded as FAILED,
// and the lock is taken over. poll is how often to try.
func (db *DB) LockRun(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard, poll time.Duration) (*RunLock, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock run %s %s: %w", channel, day, interpretError(err))
	}
	key := channel + "/" + day.String() + "/" + shard.String()
	l := &RunLock{conn: conn, pid: conn.Conn().PgConn().PID(), key: key}
	for {
		var got bool
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, lockSpace, key).Scan(&got)
		if err != nil {
			conn.Release()
			return nil, fmt.Errorf("lock run %s %s: %w", channel, day, interpretError(err))
		}
		if got {
			return l, nil
		}
		if err := db.takeOverExpired(ctx, channel, dateOf(day), shard); err != nil {
			conn.Release()
			return nil, fmt.Errorf("lock run %s %s: %w", channel, day, err)
		}
		select {
		case <-ctx.Done():
			conn.Release()
			return nil, fmt.Errorf("lock run %s %s: waiting for the run in progress: %w", channel, day, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// takeOverExpired ends the holder of an expired lease, if there is one.
func (db *DB) takeOverExpired(ctx context.Context, channel string, date time.Time, shard reconcile.Shard) error {
	rows, err := db.pool.Query(ctx, `
UPDATE runs SET status = 'FAILED', finished_at = now(), lease_until = NULL,
       error = 'lease expired at ' || to_char(lease_until, 'YYYY-MM-DD HH24:MI:SS TZ') ||
               ': its holder was stuck or cut off, and was stopped',
       alert_sent_at = now(), alert_error = 'not alerted: the run that took over reports on this date'
 WHERE channel = $1 AND business_date = $2 AND shard = $3 AND status = 'RUNNING' AND lease_until < now()
RETURNING holder_pid`, channel, date, shard.String())
	if err != nil {
		return interpretError(err)
	}
	var pids []int32
	for rows.Next() {
		var pid *int32
		if err := rows.Scan(&pid); err != nil {
			rows.Close()
			return interpretError(err)
		}
		if pid != nil {
			pids = append(pids, *pid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return interpretError(err)
	}
	for _, pid := range pids {
		// Ending the backend ends its session, and with it the lock and
		// any transaction it had open: nothing of the stuck run commits.
		if _, err := db.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
			return interpretError(err)
		}
	}
	return nil
}

// Renew extends the lease of a run this lock guards. It fails when the
// lock's connection is gone or the run is no longer RUNNING (a successor
// took over): the holder must then stop.
func (l *RunLock) Renew(ctx context.Context, runID string, lease time.Duration) error {
	tag, err := l.conn.Exec(ctx, `
UPDATE runs SET lease_until = now() + $2::interval
 WHERE id = $1 AND status = 'RUNNING'`, runID, lease.String())
	if err != nil {
		return fmt.Errorf("renew lease of run %s: %w", runID, interpretError(err))
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("renew lease of run %s: %w: the run is no longer RUNNING", runID, reconcile.ErrConflict)
	}
	return nil
}

// Hold renews the lease of run runID every third of lease while the run
// works, under the context it returns: when the lease cannot be renewed
// (the connection is gone, or a successor took over) that context ends,
// its cause saying why, and the run stops before it could commit over its
// successor. release stops the renewing and gives the lock up; calling it
// again is harmless.
func (l *RunLock) Hold(ctx context.Context, runID string, lease time.Duration) (work context.Context, release func()) {
	work, stop := context.WithCancelCause(ctx)
	beat, stopBeat := context.WithCancel(ctx)
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-t.C:
				if err := l.Renew(beat, runID, lease); err != nil && beat.Err() == nil {
					stop(fmt.Errorf("lost the run's lease: %w", err))
					return
				}
			}
		}
	}()
	return work, func() {
		stopBeat()
		<-beating
		l.Release()
		stop(nil)
	}
}

// Release gives the lock up; releasing twice is harmless. A lock whose
// connection broke is already gone.
func (l *RunLock) Release() {
	if l.conn == nil {
		return
	}
	defer func() { l.conn = nil }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, lockSpace, l.key); err != nil {
		// Without a clean unlock the connection must not go back to the
		// pool holding the lock.
		l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}

// AbandonRuns records as FAILED every RUNNING run of channel and day. Call
// it holding the lock: a run still RUNNING then has no process behind it
// (killed, or cut off when the database went away). Such a run is not
// alerted on its own: its process alerted what it could, and the run that
// takes over reports on the date.
func (db *DB) AbandonRuns(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard) (int, error) {
	tag, err := db.pool.Exec(ctx, `
UPDATE runs SET status = 'FAILED', finished_at = now(), lease_until = NULL,
       error = 'abandoned: its process stopped before the run finished (killed, or the database went away)',
       alert_sent_at = now(), alert_error = 'not alerted: the run that took over reports on this date'
 WHERE channel = $1 AND business_date = $2 AND shard = $3 AND status = 'RUNNING'`, channel, dateOf(day), shard.String())
	if err != nil {
		return 0, fmt.Errorf("abandon runs of %s %s: %w", channel, day, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}
