// Package fetch fetches https image URLs for real, for the --fetch-images
// option: bounded in time, size and redirects, and refusing every address
// that is not public.
package fetch

import "github.com/mediamock/mediamock/sim"

// New returns an image resolver that fetches over the network.
func New() sim.ImageResolver { return newRemoteImages() }
