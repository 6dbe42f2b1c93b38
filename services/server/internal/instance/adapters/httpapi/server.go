// Package httpapi serves the instance module's operations of the HTTP API
// (the Discovery group of api/openapi.yaml): getInstance, getJwks and
// getWebhookKeys, as methods of the generated strict server
// (bothy/server/api). The role assembly embeds *Server in the value that
// implements api.StrictServerInterface.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bothy/server/api"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// Options configure the Server.
type Options struct {
	// JWKSMaxAge is agent.jwks_max_age: the Cache-Control max-age of getJwks
	// and getWebhookKeys. A next key is published that long before it
	// signs, so a client that refreshes within it never misses a rotation.
	// Must be positive.
	JWKSMaxAge time.Duration
	// Version is the server version getInstance reports
	// (platform/buildinfo.Version()). Must not be empty.
	Version string
}

// Server implements the Discovery methods of api.StrictServerInterface.
// Every answer is public (instance.discovery.read); the HTTP chain adds the
// CORS header Access-Control-Allow-Origin: * of these routes (x-cors).
type Server struct {
	state        instance.State
	keys         instance.Keys
	az           authorize.Authorizer
	cacheControl string
	version      string
}

// New returns the Server. It returns an error for invalid Options and
// panics on a nil dependency (a wiring bug).
func New(state instance.State, keys instance.Keys, az authorize.Authorizer, o Options) (*Server, error) {
	if state == nil || keys == nil || az == nil {
		panic("instance: httpapi.New needs the state, the keys and an authorizer")
	}
	if o.JWKSMaxAge <= 0 || o.Version == "" {
		return nil, errors.New("instance: httpapi.Options needs a positive JWKSMaxAge (agent.jwks_max_age) and a Version")
	}
	return &Server{state: state, keys: keys, az: az, version: o.Version,
		cacheControl: fmt.Sprintf("public, max-age=%d", int64(o.JWKSMaxAge/time.Second))}, nil
}

func (s *Server) check(ctx context.Context) error {
	return authorize.Check(ctx, s.az, actor.From(ctx), authorize.InstanceDiscoveryRead, authorize.Resource{Kind: authorize.KindInstance})
}

// GetInstance serves getInstance: name, version and sync epoch.
func (s *Server) GetInstance(ctx context.Context, _ api.GetInstanceRequestObject) (api.GetInstanceResponseObject, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rec, err := s.state.Load(ctx)
	if err != nil {
		return nil, err
	}
	return api.GetInstance200JSONResponse{Name: rec.Name, Version: s.version, SyncEpoch: rec.SyncEpoch}, nil
}

// GetJwks serves getJwks: the token keys of every purpose except
// webhook_out, cacheable for agent.jwks_max_age.
func (s *Server) GetJwks(ctx context.Context, _ api.GetJwksRequestObject) (api.GetJwksResponseObject, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	jwks, err := s.keys.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	out := api.Jwks{Keys: make([]api.Jwk, len(jwks))}
	for i, k := range jwks {
		out.Keys[i] = api.Jwk{Kty: api.JwkKty(k.Kty), Crv: api.JwkCrv(k.Crv), X: k.X, Kid: k.Kid, Alg: api.JwkAlg(k.Alg), Use: api.JwkUse(k.Use)}
	}
	return api.GetJwks200JSONResponse{Body: out, Headers: api.GetJwks200ResponseHeaders{CacheControl: &s.cacheControl}}, nil
}

// GetWebhookKeys serves getWebhookKeys: the webhook_out keys in the states
// next, active and retiring (ordered active, next, retiring, then kid),
// each as whpk_ + base64 of its DER SubjectPublicKeyInfo, not_after only
// when set; cacheable for agent.jwks_max_age like getJwks.
func (s *Server) GetWebhookKeys(ctx context.Context, _ api.GetWebhookKeysRequestObject) (api.GetWebhookKeysResponseObject, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	keys, err := s.keys.PublicKeys(ctx, instance.PurposeWebhookOut)
	if err != nil {
		return nil, err
	}
	out := api.WebhookKeys{Keys: make([]api.WebhookKey, len(keys))}
	for i, k := range keys {
		out.Keys[i] = api.WebhookKey{Kid: k.KeyID, PublicKey: instance.FormatWebhookPublicKey(k.Key), State: api.WebhookKeyState(k.State)}
		if !k.NotAfter.IsZero() {
			notAfter := k.NotAfter.UTC()
			out.Keys[i].NotAfter = &notAfter
		}
	}
	return api.GetWebhookKeys200JSONResponse{Body: out, Headers: api.GetWebhookKeys200ResponseHeaders{CacheControl: &s.cacheControl}}, nil
}
