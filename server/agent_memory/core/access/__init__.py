"""Who may do what: caller identities, the VSM permission gate, which entries a request may
see, read lists, bearer tokens and their revocation, per-caller rate limits."""
