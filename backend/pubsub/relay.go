package pubsub

import "context"

// Envelope is an event on its way to a UI: which service it came from (topic), what happened
// (type) and the payload. Both doors (the Wails app and the HTTP server) send these, so the
// frontend handles one shape whatever door it is behind.
type Envelope struct {
	Topic string `json:"topic"`
	Type  string `json:"type"`
	Data  any    `json:"data"`
}

// Relay subscribes to b and calls send with each event wrapped in an Envelope of the given
// topic, until ctx ends or the broker shuts down. It blocks; run it in a goroutine you own.
func Relay[T any](ctx context.Context, b *Broker[T], topic string, send func(Envelope)) {
	for ev := range b.Subscribe(ctx) {
		send(Envelope{Topic: topic, Type: ev.Type, Data: ev.Payload})
	}
}

// Source is one broker's events, ready to forward under a topic. The doors take a list of
// sources, so a new service's events reach every UI by adding one line where they are wired.
type Source func(ctx context.Context, send func(Envelope))

// From makes a Source of a broker's events under topic.
func From[T any](b *Broker[T], topic string) Source {
	return func(ctx context.Context, send func(Envelope)) { Relay(ctx, b, topic, send) }
}
