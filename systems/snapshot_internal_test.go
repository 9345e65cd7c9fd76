package systems

import (
	"testing"

	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/models"
)

// TestLiveJobImageMirrorsEveryField fails when a live job gains a field its image does not keep:
// its route is routed again by model id, and its context made again from its agent's turn (its
// being cancelled is what the image keeps).
func TestLiveJobImageMirrorsEveryField(t *testing.T) {
	gobtest.Mirrors[liveJob, liveJobImage](t, "route", "ctx")
}

// TestViewImageMirrorsTheView: a live job's view is imaged field by field; a field models.View
// gains must be kept too, or a restored live turn would send another request. Its random stream
// is pointed at the job's own source again.
func TestViewImageMirrorsTheView(t *testing.T) {
	gobtest.Mirrors[models.View, viewImage](t, "Rand")
}
