package store

import "time"

// Freshness states (seed 001).
const (
	Fresh        = "fresh"
	ExpiringSoon = "expiring_soon"
	Expired      = "expired"
)

// Freshnesses lists the states in a stable order.
var Freshnesses = []string{Fresh, ExpiringSoon, Expired}

// Defaults of Options.
const (
	DefaultTTL          = 7 * 24 * time.Hour
	DefaultExpiringSoon = time.Hour
	DefaultExpiredGrace = 900 * time.Second
	// MaxTTL bounds ttl_minutes and extend_minutes (one year).
	MaxTTL = 366 * 24 * time.Hour
)

// freshness is an entry's state at now: expired from expires_at on,
// expiring_soon within the window before it, else fresh. unavailable is
// past the expired grace: such an entry is treated as absent.
func (s *Store) freshness(e *Entry, now time.Time) (state string, remaining time.Duration, unavailable bool) {
	remaining = e.ExpiresAt.Sub(now)
	switch {
	case remaining <= 0:
		return Expired, 0, !now.Before(e.ExpiresAt.Add(s.grace))
	case remaining <= s.expiringSoon:
		return ExpiringSoon, remaining, false
	}
	return Fresh, remaining, false
}

func validFreshness(f string) bool {
	for _, s := range Freshnesses {
		if f == s {
			return true
		}
	}
	return false
}
