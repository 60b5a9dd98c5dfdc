package kube

import dto "github.com/prometheus/client_model/go"

// Reading the API server's /metrics (snapshot.Metrics): one way to take a
// sample's labels and value, for every check that reads a family.

// MetricLabels are the sample's labels by name.
func MetricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// MetricValue is a counter's, gauge's or untyped sample's value; 0 for
// histograms and summaries.
func MetricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// SumBy adds a family's values up per value of one label, over the
// samples keep accepts (all when keep is nil); empty for a nil family.
func SumBy(fam *dto.MetricFamily, label string, keep func(map[string]string) bool) map[string]float64 {
	out := map[string]float64{}
	if fam == nil {
		return out
	}
	for _, m := range fam.GetMetric() {
		l := MetricLabels(m)
		if keep == nil || keep(l) {
			out[l[label]] += MetricValue(m)
		}
	}
	return out
}
