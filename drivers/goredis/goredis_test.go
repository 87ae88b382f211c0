package goredis_test

import (
	"testing"

	"github.com/lockbench/lockbench/drivers/drivertest"
	"github.com/lockbench/lockbench/drivers/goredis"
)

func TestConformance(t *testing.T) { drivertest.Run(t, goredis.Name, goredis.Open) }
