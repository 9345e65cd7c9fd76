package serve

import (
	"os"
	"testing"

	"github.com/warrenhq/warren"
)

func TestMain(m *testing.M) {
	warren.Init()
	os.Exit(m.Run())
}
