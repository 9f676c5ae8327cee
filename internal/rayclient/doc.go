// Package rayclient is a typed, context-aware client for the HTTP API served
// by the Ray dashboard (verified against Ray 2.60.0).
//
// It covers:
//
//   - GET  /api/version                      -> Client.Version
//   - GET  /api/v0/nodes                     -> Client.ListNodes (state API)
//   - GET  /api/v0/placement_groups          -> Client.ListPlacementGroups (state API)
//   - POST /api/jobs/                        -> Client.SubmitJob
//   - GET  /api/jobs/                        -> Client.ListJobs
//   - GET  /api/jobs/{id}                    -> Client.GetJob
//   - GET  /api/jobs/{id}/logs               -> Client.GetJobLogs
//   - POST /api/jobs/{id}/stop               -> Client.StopJob
//   - DELETE /api/jobs/{id}                  -> Client.DeleteJob
//
// # Transport and retries
//
// Requests go through github.com/hashicorp/go-retryablehttp on top of a
// go-cleanhttp pooled transport. Connection errors, HTTP 429 and HTTP 5xx
// (except 501) are retried up to Config.RetryMax times with exponential
// backoff and jitter; a Retry-After header on 429/503 is honoured (capped at
// MaxRetryAfter). Other 4xx responses are never retried. Ray's job API turns
// some deterministic failures into HTTP 500 with a Python traceback (for
// example submitting a duplicate submission_id, or deleting a job that is
// still running); those bodies are recognised and not retried.
// Every call honours its context: cancellation stops both the in-flight
// attempt and any pending backoff. Config.RequestTimeout bounds each HTTP
// attempt, not the whole call; bound the whole call with the context.
//
// # Authentication
//
// Ray 2.60 token authentication (RAY_AUTH_MODE=token) is checked by the
// dashboard's aiohttp middleware, which reads the "Authorization" header
// (then "X-Ray-Authorization", then the "ray-authentication-token" cookie)
// and compares it with "Bearer <token>". Config.Token is therefore sent as
// "Authorization: Bearer <token>". Missing tokens get HTTP 401
// ("Unauthorized: Missing authentication token"), wrong ones HTTP 403
// ("Forbidden: Invalid authentication token"); see IsUnauthorized.
//
// The token never appears in log fields, error strings or the String/GoString
// output of Config and Client; any occurrence of it in a server response
// body is replaced with "[REDACTED]" before it is put into an error.
// go-retryablehttp's own logger is disabled; request/response logging goes
// through Config.Logger and never includes headers.
//
// The dashboard rejects mutating requests that look like they come from a
// browser (User-Agent starting with "Mozilla", or Origin/Referer/Sec-Fetch-*
// headers) with HTTP 403/405, so New refuses such a configuration.
//
// # State API lists
//
// List calls return the rows together with an error when the server says the
// answer is incomplete, so callers cannot silently miss entries:
//
//   - *TruncatedError (errors.Is(err, ErrTruncated)) when the server limit
//     cut the result (num_filtered > rows returned) or the data source
//     truncated it (total > num_after_truncation).
//   - *PartialFailureError (errors.Is(err, ErrPartialFailure)) when the
//     response carries a partial_failure_warning.
//
// Both may be joined with errors.Join. Informational "warnings" from the
// server are logged through Config.Logger and returned in ListMeta by the
// ...WithMeta variants.
package rayclient
