package report

// Ramped reports whether s ran a client ramp (--clients ramp:..., stages:...;
// params.clients_shape): its clients ran for different times, its
// clients figure is the ramp's maximum, and its timeline entries carry
// clients, clients_mean and efficiency.
func (s Scenario) Ramped() bool { return s.Params["clients_shape"] != "" }

// HasJain reports whether s has Jain's fairness index: it made operations
// and ran no client ramp (whose clients ran for different times, so that
// their op counts measure the ramp, not fairness: Jain is absent there).
func (s Scenario) HasJain() bool { return s.Ops > 0 && !s.Ramped() }
