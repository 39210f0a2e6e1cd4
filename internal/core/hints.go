package core

// Hints are a person's language and place, as their MCP client tells them
// in a call's _meta (seed 004's client hints: openai/locale and
// openai/userLocation), for a page to be shown during the call. The zero
// Hints are the browser's own: no override.
type Hints struct {
	// Locale is a BCP 47 language tag, such as "fr-FR" ("": the browser's).
	Locale string
	// Timezone is an IANA time zone, such as "Asia/Tokyo" ("": the
	// browser's).
	Timezone string
	// Geo says that Latitude and Longitude, in degrees, are the person's
	// position.
	Geo                 bool
	Latitude, Longitude float64
}

// HintChange is what a tab is to be shown: To, where it shows From now
// (Reset: what it shows is not known, as after a change that failed, so
// every override is set anew). Origin is the tab's top-level origin, which
// the geolocation permission of To is granted to for the call.
type HintChange struct {
	From, To Hints
	Reset    bool
	Origin   string
}
