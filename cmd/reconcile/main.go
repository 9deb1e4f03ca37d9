// Command reconcile is the nightly payment-reconciliation job: it compares
// the channels' settlement files with the orders and refunds in PostgreSQL,
// reverses unambiguous duplicates, and reports the rest for review.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"reconcile"
	"reconcile/reports"
)

func main() {
	// The collector keeps Go's pace (GOGC 100 unless set): the row store
	// lives outside the heap, and a slower pace while the file is read
	// made a night of ten million rows slower, not faster.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the job to stop and record why; a second one
	// stops the process at once, as it would without the job's handling.
	go func() {
		<-ctx.Done()
		stop()
	}()
	app := &App{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now}
	os.Exit(app.Main(ctx, os.Args[1:]))
}

// commands are the subcommands, in the order the help lists them.
var commands = []struct {
	name, synopsis string
	run            func(*App, context.Context, []string) error // nil: help
}{
	{"run", "reconcile one business date: every configured channel, or one", (*App).runCmd},
	{"fetch", "download a channel's settlement file of a date from its API or SFTP drop", (*App).fetchCmd},
	{"migrate", "create or upgrade the database schema", (*App).migrateCmd},
	{"schedule", "run as a daemon: fetch the files as they become available, reconcile them", (*App).scheduleCmd},
	{"demo", "run the job on the bundled fixtures against a throwaway PostgreSQL", (*App).demoCmd},
	{"review", "import the decisions written in a review workbook", (*App).reviewCmd},
	{"alert", "send a run's alert that could not be sent", (*App).alertCmd},
	{"report", "one workbook, summary and alert for a date run as shards", (*App).reportCmd},
	{"check-config", "check a config and its environment; show what the next tick would do", (*App).checkConfigCmd},
	{"help", "show this help, or a command's", nil},
}

const mainUsage = `reconcile compares payment channels' settlement files with our own records.

Usage:
  reconcile run --date YYYY-MM-DD [--channel NAME] [--file PATH] [flags]
  reconcile --date YYYY-MM-DD ...      (the same as run)
  reconcile fetch --date YYYY-MM-DD [--channel NAME] [--force]
  reconcile migrate [--dsn DSN]
  reconcile schedule [--config FILE]
  reconcile demo [--out DIR]
  reconcile review import FILE.xlsx [--reviewer NAME]
  reconcile alert --resend RUN_ID
  reconcile run --shard I/N …  /  reconcile report --date D --channel C
  reconcile check-config [--config FILE]
  reconcile help [COMMAND]

Commands:
`

// Main runs the command line and returns the exit status.
func (a *App) Main(ctx context.Context, args []string) int {
	if a.Getenv == nil {
		a.Getenv = os.Getenv
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	err := a.dispatch(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(a.Stderr, "reconcile %s: %s\n", ue.cmd, ue.msg)
		if ue.cmd != "" {
			fmt.Fprintf(a.Stderr, "Try 'reconcile %s -h'.\n", ue.cmd)
		} else {
			fmt.Fprintln(a.Stderr, "Try 'reconcile help'.")
		}
		return ExitUsage
	default:
		fmt.Fprintf(a.Stderr, "reconcile: %s\n", reports.ErrorText(err))
		return ExitFailed
	}
}

func (a *App) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		a.printHelp(a.Stderr)
		return &usageError{msg: "no command given"}
	}
	cmd, rest := args[0], args[1:]
	for _, c := range commands {
		if c.name == cmd && c.run != nil {
			return c.run(a, ctx, rest)
		}
	}
	switch cmd {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			return a.dispatch(ctx, []string{rest[0], "-h"})
		}
		a.printHelp(a.Stdout)
		return nil
	}
	if len(cmd) > 1 && cmd[0] == '-' {
		return a.runCmd(ctx, args) // `reconcile --date …` is `reconcile run --date …`
	}
	return &usageError{msg: fmt.Sprintf("unknown command %s", reconcile.Quote(cmd))}
}

func (a *App) printHelp(w io.Writer) {
	fmt.Fprint(w, mainUsage)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.synopsis)
	}
	fmt.Fprint(w, exitUsage)
}
