package snapshot

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// The Gateway API's kinds (gateway.networking.k8s.io/v1). They are custom
// resources of an Extension group: a cluster without the Gateway API CRDs
// answers 404, and the loader files an empty list (no Gateway to
// diagnose), so the checks that read them pass instead of being skipped
// and the scan stays complete. Forbidden reads still skip them.
var (
	GatewayClasses = Resource{Group: gatewayv1.GroupName, Version: "v1", Resource: "gatewayclasses", Kind: "GatewayClass"}
	Gateways       = Resource{Group: gatewayv1.GroupName, Version: "v1", Resource: "gateways", Kind: "Gateway", Namespaced: true}
	HTTPRoutes     = Resource{Group: gatewayv1.GroupName, Version: "v1", Resource: "httproutes", Kind: "HTTPRoute", Namespaced: true}
	GRPCRoutes     = Resource{Group: gatewayv1.GroupName, Version: "v1", Resource: "grpcroutes", Kind: "GRPCRoute", Namespaced: true}
)

// GatewayClasses returns the listed GatewayClasses.
func (s *Snapshot) GatewayClasses() []gatewayv1.GatewayClass {
	if l := typed[*gatewayv1.GatewayClassList](s, GatewayClasses); l != nil {
		return l.Items
	}
	return nil
}

// Gateways returns the listed Gateways.
func (s *Snapshot) Gateways() []gatewayv1.Gateway {
	if l := typed[*gatewayv1.GatewayList](s, Gateways); l != nil {
		return l.Items
	}
	return nil
}

// HTTPRoutes returns the listed HTTPRoutes.
func (s *Snapshot) HTTPRoutes() []gatewayv1.HTTPRoute {
	if l := typed[*gatewayv1.HTTPRouteList](s, HTTPRoutes); l != nil {
		return l.Items
	}
	return nil
}

// GRPCRoutes returns the listed GRPCRoutes.
func (s *Snapshot) GRPCRoutes() []gatewayv1.GRPCRoute {
	if l := typed[*gatewayv1.GRPCRouteList](s, GRPCRoutes); l != nil {
		return l.Items
	}
	return nil
}
