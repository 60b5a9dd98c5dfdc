package kube

import "testing"

// TestExecFailure reads the runtimes' words for a command that cannot run.
func TestExecFailure(t *testing.T) {
	for msg, want := range map[string]struct {
		program string
		denied  bool
	}{
		`failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "gunicorn": executable file not found in $PATH: unknown`: {"gunicorn", false},
		"container create failed: executable file `gunicorn` not found in $PATH: No such file or directory":                                                                                                             {"gunicorn", false},
		`OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "/app/start.sh": stat /app/start.sh: no such file or directory: unknown`:                                           {"/app/start.sh", false},
		`failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/entrypoint.sh": permission denied: unknown`:                                              {"/entrypoint.sh", true},
		`crun: executable file ` + "`/docker-entrypoint.sh`" + ` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found`:                                           {"/docker-entrypoint.sh", false},
		`couldn't find key password in Secret shop/db`: {"", false},
		`context deadline exceeded`:                    {"", false},
	} {
		program, denied := ExecFailure(msg)
		if program != want.program || denied != want.denied {
			t.Errorf("%q: %q %v, want %q %v", msg, program, denied, want.program, want.denied)
		}
	}
}

// TestWrongArch reads the runtimes' words for a program built for another
// architecture than the node's.
func TestWrongArch(t *testing.T) {
	for msg, want := range map[string]string{
		`exec /usr/local/bin/app: exec format error`:                              "/usr/local/bin/app",
		`standard_init_linux.go:228: exec user process caused: exec format error`: "the container's program",
		`failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/app/server": exec format error: unknown`: "/app/server",
	} {
		if got, ok := WrongArch(msg); !ok || got != want {
			t.Errorf("WrongArch(%q) = %q, %v; want %q", msg, got, ok, want)
		}
	}
	if _, ok := WrongArch(`exec: "gunicorn": executable file not found in $PATH`); ok {
		t.Error("a missing program is not an architecture")
	}
}
