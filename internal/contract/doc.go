// Package contract is the provider's contract with driver.py, the Python
// driver that runs as a Ray job: the request and result (the JSON wire
// format), the constants every request carries (DriverContract), the node
// claims and ownership a request asks for, the placement a result describes
// (NewPlacement), the driver's error codes worded for users with their fixes
// (Describe, Fix), and the list of rules that exist in both Go and Python
// (SharedRules).
//
// It does no I/O: internal/driver submits the requests.
package contract
