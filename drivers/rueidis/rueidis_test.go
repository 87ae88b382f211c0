package rueidis_test

import (
	"testing"

	"github.com/lockbench/lockbench/drivers/drivertest"
	"github.com/lockbench/lockbench/drivers/rueidis"
)

func TestConformance(t *testing.T) { drivertest.Run(t, rueidis.Name, rueidis.Open) }
