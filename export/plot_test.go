package export

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestPlotSeries(t *testing.T) {
	tests := []struct {
		name   string
		sets   func(s *plotSeries) int // makes the series; returns the events
		bounds int                     // at most this many buckets
		check  func(s *plotSeries) error
	}{
		{"one spike among a million events survives", func(s *plotSeries) int {
			for ev := range 1_000_000 {
				v := uint64(ev % 7)
				if ev == 777_777 {
					v = 1 << 40
				}
				s.set(ev, v)
			}
			return 1_000_000
		}, maxPlotPoints, func(s *plotSeries) error {
			if s.top != 1<<40 {
				return fmt.Errorf("top %d", s.top)
			}
			n := 0
			for _, b := range s.buckets {
				if b.max == 1<<40 {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("%d buckets hold the spike, want 1", n)
			}
			return nil
		}},
		{"a value set at a bucket's first event replaces the one carried in", func(s *plotSeries) int {
			s.set(0, 64)
			s.set(3, 0)
			return 8
		}, 8, func(s *plotSeries) error {
			want := []uint64{64, 64, 64, 0}
			for i, w := range want {
				if s.buckets[i].max != w {
					return fmt.Errorf("bucket %d max %d, want %d (all: %+v)", i, s.buckets[i].max, w, s.buckets)
				}
			}
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newPlotSeries()
			events := tc.sets(s)
			s.extend(events - 1)
			if len(s.buckets) > tc.bounds {
				t.Errorf("%d buckets, want at most %d", len(s.buckets), tc.bounds)
			}
			if err := tc.check(s); err != nil {
				t.Error(err)
			}
			line, area := s.path(events, s.top)
			if ok, _ := regexp.MatchString(`^[MHVZ0-9. ]+$`, area); !ok || !strings.HasPrefix(area, line) {
				t.Errorf("path %.80q, area %.80q", line, area)
			}
		})
	}
}
