package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
	"reconcile/ledger/tempdb"
)

// childEnv tells the test binary to be the CLI (see TestMain).
const childEnv = "RECONCILE_TEST_CLI_CHILD"

// child is the CLI as a separate process, which a test can kill.
func child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// bigFixture loads n paid orders of channel shop and writes a canonical CSV
// settling them, in which dups orders are charged twice (unambiguous
// duplicates) and every 5000th order is missing. It returns the file and
// how many findings a run must make.
func bigFixture(t *testing.T, db *ledger.DB, n, dups int) (string, int) {
	t.Helper()
	if err := db.Exec(context.Background(), fmt.Sprintf(`
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at)
SELECT 'O' || g, 100 + g %% 900, 'USD', 'PAID', 'shop', 'T' || g,
       timestamptz '2026-11-28 00:00:00+00' + (g %% 80000) * interval '1 second'
  FROM generate_series(1, %d) g`, n)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n")
	row := func(order, txn string, g int, at time.Time) {
		a := 100 + g%900
		fmt.Fprintf(&b, "payment,%s,,%s,%d.%02d,USD,%s\n", order, txn, a/100, a%100, at.Format(time.RFC3339))
	}
	missing := 0
	for g := 1; g <= n; g++ {
		if g%5000 == 0 {
			missing++
			continue
		}
		at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).Add(time.Duration(g%80000) * time.Second)
		row(fmt.Sprintf("O%d", g), fmt.Sprintf("T%d", g), g, at)
		if g%(n/dups) == 1 && g/(n/dups) < dups {
			row(fmt.Sprintf("O%d", g), fmt.Sprintf("T%d-again", g), g, at.Add(time.Minute))
		}
	}
	file := filepath.Join(t.TempDir(), "shop-2026-11-28.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, dups + missing
}

func shopArgs(dsn, file, out string, extra ...string) []string {
	return append([]string{"run", "--date", "2026-11-28", "--channel", "shop", "--format", "csv",
		"--file", file, "--dsn", dsn, "--out", out}, extra...)
}

// state is what the database says about the shop runs.
type state struct {
	journals, running, succeeded, current, currentFindings int
}

func readState(t *testing.T, db *ledger.DB) state {
	t.Helper()
	var s state
	err := db.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM journals),
		(SELECT count(*) FROM runs WHERE status = 'RUNNING'),
		(SELECT count(*) FROM runs WHERE status = 'SUCCEEDED'),
		(SELECT count(*) FROM runs WHERE status = 'SUCCEEDED' AND superseded_by IS NULL),
		(SELECT count(*) FROM findings f JOIN runs r ON r.id = f.run_id
		  WHERE r.status = 'SUCCEEDED' AND r.superseded_by IS NULL)`).
		Scan(&s.journals, &s.running, &s.succeeded, &s.current, &s.currentFindings)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSIGKILLAtRandomPoints kills a run at random points, then runs again:
// each duplicate has exactly one journal and every finding is there.
func TestSIGKILLAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	db, dsn := ledgertest.DB(t)
	const dups = 12
	file, wantFindings := bigFixture(t, db, 30000, dups)

	start := time.Now()
	if out, err := child(shopArgs(dsn, file, t.TempDir())...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	took := time.Since(start)
	if s := readState(t, db); s.journals != dups || s.currentFindings != wantFindings {
		t.Fatalf("first run: %+v, want %d journals and %d findings", s, dups, wantFindings)
	}

	rng := rand.New(rand.NewPCG(1, 2)) // a fixed seed: the same kill points every time
	landed := map[string]int{}
	const rounds = 20
	for round := 0; round < rounds; round++ {
		before := readState(t, db)
		cmd := child(shopArgs(dsn, file, t.TempDir(), "--force")...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took + took/2))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		after := readState(t, db)
		switch {
		case after.running > before.running:
			landed["mid-run"]++
		case after.succeeded > before.succeeded:
			landed["after commit"]++
		default:
			landed["before start"]++
		}
		if after.journals != dups {
			t.Fatalf("round %d: %d journals right after the kill, want %d", round, after.journals, dups)
		}

		if out, err := child(shopArgs(dsn, file, t.TempDir(), "--force")...).CombinedOutput(); err != nil {
			t.Fatalf("round %d: the run after the kill failed: %v\n%s", round, err, out)
		}
		s := readState(t, db)
		if s.journals != dups || s.running != 0 || s.current != 1 || s.currentFindings != wantFindings {
			t.Fatalf("round %d: %+v; want %d journals, nothing RUNNING, one current run with %d findings",
				round, s, dups, wantFindings)
		}
	}
	t.Logf("figures: %d SIGKILL rounds over %d rows with %d duplicates (a run takes %s); kills landed %v; "+
		"every round ended with %d journals and %d findings", rounds, 30000+dups-6, dups, took.Round(time.Millisecond),
		landed, dups, wantFindings)
}

// TestEightRunsAtOnce: eight processes run the same date at once; one does
// the work, the others wait for it and return its result.
func TestEightRunsAtOnce(t *testing.T) {
	db, dsn := ledgertest.DB(t)
	const dups = 5
	file, wantFindings := bigFixture(t, db, 10000, dups)
	var wg sync.WaitGroup
	outs := make([]string, 8)
	errs := make([]error, 8)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b, err := child(shopArgs(dsn, file, t.TempDir())...).CombinedOutput()
			outs[i], errs[i] = string(b), err
		}(i)
	}
	wg.Wait()
	replays := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
		if strings.Contains(outs[i], "which reconciled this file before") {
			replays++
		}
	}
	s := readState(t, db)
	var runs int
	db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM runs`).Scan(&runs)
	if runs != 1 || replays != 7 || s.journals != dups || s.currentFindings != wantFindings {
		t.Errorf("got %d runs, %d replays, %+v; want 1 run, 7 replays, %d journals, %d findings",
			runs, replays, s, dups, wantFindings)
	}
	t.Logf("figures: 8 processes at once: %d run did the work, %d returned its result; %d journals for %d duplicates",
		runs, replays, s.journals, dups)
}

// TestDatabaseStopsMidRun: PostgreSQL goes away in the middle of a run. The
// run fails with a clear message; once the database is back, the next run
// records the stranded one as FAILED and succeeds.
func TestDatabaseStopsMidRun(t *testing.T) {
	if os.Getenv(ledgertest.EnvURL) != "" {
		t.Skip("needs a server of its own to stop")
	}
	ctx := context.Background()
	srv, err := tempdb.Start(ctx, tempdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	dsn := srv.DSN("postgres")
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const dups = 5
	file, wantFindings := bigFixture(t, db, 200000, dups)
	db.Close()

	cmd := child(shopArgs(dsn, file, t.TempDir())...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the run is recorded, then take the database away.
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe, err := ledger.Open(ctx, dsn)
		if err == nil {
			var n int
			probe.Pool().QueryRow(ctx, `SELECT count(*) FROM runs WHERE status = 'RUNNING'`).Scan(&n)
			probe.Close()
			if n == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	last := lastLine(out.String())
	if code != ExitFailed || !strings.Contains(last, "database unreachable") {
		t.Fatalf("run with the database gone: exit %d (%v), last line %q; want exit 1 and one clear line", code, err, last)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}

	if b, err := child(shopArgs(dsn, file, t.TempDir())...).CombinedOutput(); err != nil {
		t.Fatalf("the run after the outage: %v\n%s", err, b)
	}
	db, err = ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var failed, succeeded int
	var reason string
	db.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'FAILED'), count(*) FILTER (WHERE status = 'SUCCEEDED'),
		coalesce(max(error) FILTER (WHERE status = 'FAILED'), '') FROM runs`).Scan(&failed, &succeeded, &reason)
	s := readState(t, db)
	if failed != 1 || succeeded != 1 || s.journals != dups || s.currentFindings != wantFindings {
		t.Errorf("after the outage: %d FAILED (%q), %d SUCCEEDED, %+v; want 1, 1, %d journals, %d findings",
			failed, reason, succeeded, s, dups, wantFindings)
	}
	t.Logf("figures: database stopped mid-run: exit %d with %q; the stranded run recorded FAILED (%s); the next run succeeded with %d findings",
		code, last, reason, s.currentFindings)
}
