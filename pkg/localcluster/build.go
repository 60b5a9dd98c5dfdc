// Package localcluster builds and runs a real, local Kubernetes control plane
// (etcd, kube-apiserver and, when asked, kube-controller-manager) for
// kubectl-doctor's end-to-end tests and demo. There are no kubelets: nodes and
// their status are written through the API.
//
// The binaries are built from the Go module proxy by the wrapper modules in
// hack/controlplane (kept out of the main go.mod) into a cache outside the
// repository, keyed by a hash of those modules, so only the first build is
// slow. Everything binds to 127.0.0.1, and the API server's "cluster" egress
// goes through an HTTP CONNECT proxy on a unix socket that does not exist, so
// it can never dial the made-up pod, node and Service IPs of fixtures.
package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// KubernetesVersion is the release the control plane is built from.
const KubernetesVersion = "v1.37.2"

// ldflags stamp the version the API server reports at /version (a module
// build has no git metadata) and strip debug info.
const ldflags = "-s -w" +
	" -X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
	" -X k8s.io/component-base/version.gitMajor=1" +
	" -X k8s.io/component-base/version.gitMinor=37" +
	" -X k8s.io/component-base/version.gitTreeState=clean"

// Binaries are the paths of a built control plane.
type Binaries struct {
	Etcd, APIServer, ControllerManager string
}

// CacheDir is where built binaries live: $KUBECTL_DOCTOR_CACHE, else the
// user cache directory's kubectl-doctor folder.
func CacheDir() (string, error) {
	if d := os.Getenv("KUBECTL_DOCTOR_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set KUBECTL_DOCTOR_CACHE): %w", err)
	}
	return filepath.Join(d, "kubectl-doctor"), nil
}

// RepoRoot finds the repository root by walking up to hack/controlplane.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "controlplane", "kube", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (hack/controlplane) above the working directory")
		}
		dir = parent
	}
}

// sourceHash keys the cache on everything that decides the binaries.
func sourceHash(root string) (string, error) {
	h := sha256.New()
	h.Write([]byte(ldflags))
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "hack", "controlplane"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Build returns the control-plane binaries, building them into the cache
// first when they are missing (about ten minutes on two cores, once).
// Concurrent callers wait for one build through a file lock.
func Build(ctx context.Context, root string, log io.Writer) (Binaries, error) {
	cache, err := CacheDir()
	if err != nil {
		return Binaries{}, err
	}
	hash, err := sourceHash(root)
	if err != nil {
		return Binaries{}, fmt.Errorf("hashing hack/controlplane: %w", err)
	}
	dir := filepath.Join(cache, "controlplane", KubernetesVersion+"-"+hash)
	bins := Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
	}
	if present(bins) {
		return bins, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return Binaries{}, err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Binaries{}, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return Binaries{}, fmt.Errorf("locking the build cache: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	if present(bins) {
		return bins, nil // built by someone else while we waited
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return Binaries{}, err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	fmt.Fprintf(log, "building the Kubernetes %s control plane into %s (first time only, ~10 minutes on 2 cores)...\n", KubernetesVersion, dir)
	for _, mod := range []string{"etcd", "kube"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags="+ldflags, "-o", tmp+string(filepath.Separator), "./cmd/...")
		cmd.Dir = filepath.Join(root, "hack", "controlplane", mod)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("building hack/controlplane/%s: %w", mod, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return Binaries{}, err
	}
	fmt.Fprintf(log, "built the control plane in %s\n", time.Since(start).Round(time.Second))
	return bins, nil
}

func present(b Binaries) bool {
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager} {
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
