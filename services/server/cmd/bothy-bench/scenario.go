package main

import (
	"fmt"
	"math"
	"time"
)

// shape is one scenario of the benchmark: the world the REST API builds
// and the load the generator offers.
type shape struct {
	// Name is the scenario's name (the -scenarios flag).
	Name string
	// Apps is the number of apps, each installed with the one webhook
	// subscription its manifest gives it (message.created).
	Apps int
	// Channels is the number of channels of the space; app i is granted
	// read on channel i mod Channels, and message j goes to channel j mod
	// Channels.
	Channels int
	// Messages is the number of messages Alex posts.
	Messages int
	// Rate is the offered rate in messages per second; 0 posts flat out
	// with every poster.
	Rate int
	// Workers is the number of `bothy serve --role worker` processes.
	Workers int
	// Backlog starts the workers only after every message is posted (or
	// half the scenario's time is up).
	Backlog bool
	// Hung is the index of the app whose receiver holds every request
	// until the sender gives up (webhook.delivery_timeout); -1: none.
	Hung int
}

// describe states the shape in one line, for the report.
func (s shape) describe() string {
	load := "flat out"
	if s.Rate > 0 {
		load = fmt.Sprintf("offered at %d messages/s", s.Rate)
	}
	var world string
	switch {
	case s.Apps == 1 && s.Channels == 1:
		world = "1 app on 1 channel (one hot subscription)"
	case s.Channels == 1:
		world = fmt.Sprintf("%d apps on 1 channel (fan-out)", s.Apps)
	case s.Channels == s.Apps:
		world = fmt.Sprintf("%d apps, each granted on its own channel", s.Apps)
	default:
		world = fmt.Sprintf("%d apps on %d channels", s.Apps, s.Channels)
	}
	out := fmt.Sprintf("%s; %d messages %s; %d worker process", world, s.Messages, load, s.Workers)
	if s.Workers != 1 {
		out += "es"
	}
	if s.Backlog {
		out += ", started after the messages were posted"
	}
	if s.Hung >= 0 {
		out += fmt.Sprintf("; the receiver of app %d hangs until webhook.delivery_timeout", s.Hung)
	}
	return out
}

// subscribers returns how many apps are granted on channel c.
func (s shape) subscribers(c int) int {
	n := 0
	for i := range s.Apps {
		if i%s.Channels == c && i != s.Hung {
			n++
		}
	}
	return n
}

// counts are the message counts and the load of every scenario, from the
// flags; scale multiplies every count (and the rate scenario's duration).
type counts struct {
	Apps         int
	Fleet        int
	FanOut       int
	Hot          int
	Rate         int
	RateDuration time.Duration
	Backlog      int
	TwoWorkers   int
	Hang         int
	Scale        float64
}

// scaled returns n times scale, rounded, at least 1.
func scaled(n int, scale float64) int {
	return max(1, int(math.Round(float64(n)*scale)))
}

// scenarios returns every scenario in running order.
func (c counts) scenarios() []shape {
	a := c.Apps
	fleet := func(name string, messages int) shape {
		return shape{Name: name, Apps: a, Channels: a, Messages: scaled(messages, c.Scale), Workers: 1, Hung: -1}
	}
	rate := fleet("rate", int(float64(c.Rate)*c.RateDuration.Seconds()))
	rate.Rate = c.Rate
	backlog := fleet("backlog", c.Backlog)
	backlog.Backlog = true
	two := fleet("two-workers", c.TwoWorkers)
	two.Workers = 2
	hang := fleet("hang", c.Hang)
	hang.Hung = 0
	// hang runs right after fleet, the run it is compared with, so that a
	// machine whose speed drifts over the minutes between scenarios moves
	// the comparison as little as it can (D-BE-10).
	return []shape{
		fleet("fleet", c.Fleet),
		hang,
		{Name: "fan-out", Apps: a, Channels: 1, Messages: scaled(c.FanOut, c.Scale), Workers: 1, Hung: -1},
		{Name: "hot", Apps: 1, Channels: 1, Messages: scaled(c.Hot, c.Scale), Workers: 1, Hung: -1},
		rate,
		backlog,
		two,
	}
}

// scenarioNames lists the names of every scenario, in running order.
func scenarioNames() []string {
	var out []string
	for _, s := range (counts{Apps: 1, Scale: 1}).scenarios() {
		out = append(out, s.Name)
	}
	return out
}
