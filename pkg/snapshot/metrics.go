package snapshot

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsList carries parsed /metrics out of a read.
type metricsList struct {
	runtime.Object
	families map[string]*dto.MetricFamily
}

func getRaw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	c := rest.CopyConfig(cfg)
	c.AcceptContentTypes = "text/plain"
	c.NegotiatedSerializer = Codecs().WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return client.Get().AbsPath(path).DoRaw(ctx)
}

// Metrics returns the API server's metric families by name (nil when
// /metrics was not read).
func (s *Snapshot) Metrics() map[string]*dto.MetricFamily { return s.metrics }

// SetMetrics parses Prometheus text into the snapshot, as the loader does
// with GET /metrics; fixtures use it too.
func (s *Snapshot) SetMetrics(text io.Reader) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(text)
	if err != nil {
		return fmt.Errorf("parsing metrics: %w", err)
	}
	s.metrics = m
	return nil
}
