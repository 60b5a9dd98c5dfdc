package checks

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// socketKind is the runtime a hostPath socket (or socket directory) belongs to.
type socketKind string

const (
	socketDocker     socketKind = "docker"
	socketCRIDockerd socketKind = "cri-dockerd"
	socketDockershim socketKind = "dockershim"
	socketContainerd socketKind = "containerd"
	socketCRIO       socketKind = "cri-o"
	socketAny        socketKind = "any" // /run, /var/run: every runtime's socket
)

var socketLabels = map[socketKind]string{
	socketDocker: "the Docker Engine socket", socketCRIDockerd: "the cri-dockerd socket", socketDockershim: "the dockershim socket",
	socketContainerd: "the containerd socket", socketCRIO: "the CRI-O socket", socketAny: "the host's runtime directory",
}

var socketDirs = map[string]socketKind{
	"/run/containerd": socketContainerd, "/var/run/containerd": socketContainerd, "/run/k3s/containerd": socketContainerd,
	"/run/crio": socketCRIO, "/var/run/crio": socketCRIO,
	"/run": socketAny, "/var/run": socketAny,
}

// classifyHostPath says which runtime's socket a hostPath reaches.
func classifyHostPath(p string) (socketKind, bool) {
	if p == "" {
		return "", false
	}
	clean := path.Clean(p)
	base := path.Base(clean)
	switch {
	case base == "cri-dockerd.sock":
		return socketCRIDockerd, true
	case base == "dockershim.sock":
		return socketDockershim, true
	case strings.HasSuffix(base, "docker.sock"):
		return socketDocker, true
	case strings.HasSuffix(base, "containerd.sock"):
		return socketContainerd, true
	case strings.HasSuffix(base, "crio.sock"):
		return socketCRIO, true
	}
	k, ok := socketDirs[clean]
	return k, ok
}

// knownRuntimes are the containerRuntimeVersion schemes this check judges.
var knownRuntimes = map[string]bool{"containerd": true, "cri-o": true, "docker": true}

// serves says whether a node with this runtime (and kubelet) has the socket.
func (k socketKind) serves(runtime, kubeletVersion string) bool {
	switch k {
	case socketAny:
		return true
	case socketDocker, socketCRIDockerd:
		return runtime == "docker"
	case socketDockershim:
		if runtime != "docker" {
			return false
		}
		v, err := version.ParseGeneric(kubeletVersion)
		return err != nil || v.LessThan(version.MajorMinor(1, 24))
	case socketContainerd:
		return runtime == "containerd"
	case socketCRIO:
		return runtime == "cri-o"
	}
	return false
}

// runtimeSocketPath is where each runtime serves the socket agents should use.
var runtimeSocketPath = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"cri-o":      "/var/run/crio/crio.sock",
	"docker":     "/var/run/cri-dockerd.sock",
}
