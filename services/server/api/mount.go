package api

import (
	"net/http"

	"bothy/server/internal/platform/httpserver"
)

// Mount registers every enabled operation on hs the one way the role
// assembly and the handler tests share: each route is declared with its rate
// limit class and CORS flag from the operation table, requests pass the
// schema validator before a handler runs, and every error (validation,
// decoding, handler) is written as a problem document by hs.
//
// strict implements the generated StrictServerInterface. It returns the
// validator's construction error, which only a broken embedded spec causes.
func Mount(hs *httpserver.Server, strict StrictServerInterface) error {
	v, err := NewValidator(ValidatorOptions{OnError: hs.WriteError})
	if err != nil {
		return err
	}
	for _, op := range Operations() {
		hs.Declare(httpserver.Route{
			Operation:  op.ID,
			Method:     op.Method,
			Pattern:    BasePath + op.Path,
			RateClass:  httpserver.RateClass(op.RateLimitClass),
			CORS:       op.CORS,
			BodyClass:  bodyClass(op),
			Idempotent: op.Idempotent,
		})
	}
	HandlerWithOptions(NewStrictHandlerWithOptions(strict, nil, StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  hs.WriteError,
		ResponseErrorHandlerFunc: hs.WriteError,
	}), StdHTTPServerOptions{
		BaseURL:    BasePath,
		BaseRouter: validatingRouter{Server: hs, v: v},
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			hs.WriteError(w, r, v.ParamError(r, err))
		},
	})
	return nil
}

// bodyClass returns the body limit class of op: the operations of the rate
// limit class public_auth (sign-in, step-up, discovery), which anyone may
// call, share the small limit of httpserver.BodyClassPublicAuth; every
// other operation has the default.
func bodyClass(op Operation) httpserver.BodyClass {
	if httpserver.RateClass(op.RateLimitClass) == httpserver.RateClassPublicAuth {
		return httpserver.BodyClassPublicAuth
	}
	return ""
}

// validatingRouter registers each generated operation handler on the
// Server behind the validator. The generated wrapper binds the path and
// query parameters before its middlewares run, so the validator must sit
// in front of the wrapper, not among its middlewares: otherwise a
// malformed parameter reaches the binding first and never gets the
// validator's pointers and item codes.
type validatingRouter struct {
	*httpserver.Server
	v *Validator
}

// HandleFunc registers h for pattern behind the validator.
func (vr validatingRouter) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	vr.Server.HandleFunc(pattern, vr.v.Middleware(http.HandlerFunc(h)).ServeHTTP)
}
