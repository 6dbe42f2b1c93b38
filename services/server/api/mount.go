package api

import (
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
	for _, op := range Operations() {
		hs.Declare(httpserver.Route{
			Operation: op.ID,
			Method:    op.Method,
			Pattern:   BasePath + op.Path,
			RateClass: httpserver.RateClass(op.RateLimitClass),
			CORS:      op.CORS,
		})
	}
	v, err := NewValidator(ValidatorOptions{OnError: hs.WriteError})
	if err != nil {
		return err
	}
	HandlerWithOptions(NewStrictHandlerWithOptions(strict, nil, StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  hs.WriteError,
		ResponseErrorHandlerFunc: hs.WriteError,
	}), StdHTTPServerOptions{
		BaseURL:          BasePath,
		BaseRouter:       hs,
		Middlewares:      []MiddlewareFunc{v.Middleware},
		ErrorHandlerFunc: hs.WriteError,
	})
	return nil
}
