// Package httpserver is the HTTP platform of the api role (M1-18): the
// request chain, the problem writer (RFC 9457) with the one table from
// problem codes to statuses, the idempotency stage (M1-20) and the cursor
// codec for pagination.
//
// # The chain
//
// Every request passes, in this order:
//
//  1. request ID: a fresh UUIDv7 per request, never one from the client; in
//     the X-Request-Id response header, in problem documents, in logs and
//     (through kernel/correlation) in audit entries;
//  2. access log: one line per request with method, route template,
//     status and duration; never the path with its values, the query or a
//     body;
//  3. panic recovery: a panic answers 500 internal without internals;
//  4. body limit: http.max_body_bytes; larger bodies answer 413
//     payload_too_large;
//  5. routing (http.ServeMux patterns); unknown paths and methods answer
//     404 not_found as problem documents.
//
// Then, per route, as the Route declares:
//
//  6. CORS: only routes with CORS set (the public discovery endpoints)
//     answer Access-Control-Allow-Origin: * and preflight requests; no other
//     response carries a CORS header;
//  7. rate limit: the route's class (for example rl.public_auth), a token
//     bucket per client address, 429 rate_limited with Retry-After;
//  8. authentication: a Bearer token through the Authenticator; no
//     Authorization header is the anonymous principal; the principal goes
//     into the context with actor.With;
//  9. idempotency: for POST, PUT, PATCH and DELETE with an Idempotency-Key
//     header from an authenticated principal (see serveIdempotent);
//  10. the handler.
//
// Rate limiting runs before authentication so that a flood of guessed tokens
// costs no database work.
package httpserver
