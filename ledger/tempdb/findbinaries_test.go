package tempdb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinariesNewestDebianVersion(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9.6", "15", "13"} {
		bin := filepath.Join(root, v, "bin")
		os.MkdirAll(bin, 0o755)
		for _, name := range []string{"initdb", "pg_ctl"} {
			os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	t.Setenv("PATH", t.TempDir())
	old := debianGlob
	debianGlob = filepath.Join(root, "*", "bin")
	defer func() { debianGlob = old }()

	got, err := FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "15", "bin"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestNoBinariesSaysWhatToDo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	old := debianGlob
	debianGlob = filepath.Join(t.TempDir(), "*", "bin")
	defer func() { debianGlob = old }()

	_, err := Start(context.Background(), Options{})
	if !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("Start: got %v, want ErrNoBinaries", err)
	}
	for _, hint := range []string{"apt-get install postgresql", "RECONCILE_DATABASE_URL"} {
		if !strings.Contains(err.Error(), hint) {
			t.Errorf("error %q does not say %q", err, hint)
		}
	}
}
