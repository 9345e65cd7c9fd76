package inference

import (
	"errors"
	"fmt"
	"time"
)

// TicketImage is a ticket as data, for a world snapshot. Value is the host's own image of what
// the ticket sends (the host saves and restores it).
type TicketImage struct {
	Agent, Turn uint64
	Attempt     uint32
	Tries       int
	Estimate    int64
	NotBefore   time.Time
	// Pool names the pool the ticket is in.
	Pool  string
	Value any
}

// Image returns the ticket as data, with value standing for its Value.
func (t *Ticket) Image(value any) TicketImage {
	img := TicketImage{Agent: t.Agent, Turn: t.Turn, Attempt: t.Attempt, Tries: t.tries, Estimate: t.Estimate,
		NotBefore: t.NotBefore, Value: value}
	if t.Pool != nil {
		img.Pool = t.Pool.Name()
	}
	return img
}

// Ticket returns the ticket img holds, in pool, with value as its Value.
func (img *TicketImage) Ticket(pool *Pool, value any) *Ticket {
	return &Ticket{Agent: img.Agent, Turn: img.Turn, Attempt: img.Attempt, tries: img.Tries, Estimate: img.Estimate,
		NotBefore: img.NotBefore, Pool: pool, Value: value}
}

// PoolImage is one pool's state as data: its requests in flight, its breaker, its queue and its
// retries (tickets, in order), what its rate limits reserved since they were last full (which
// rebuilds them bit for bit) and its counters.
type PoolImage struct {
	Name     string
	InFlight int
	State    BreakerState
	Failures int
	Until    time.Time
	Probing  bool
	Queue    []TicketImage
	Retries  []TicketImage
	Blocked  time.Time
	RPM, TPM []Reservation
	Stats    Stats
}

// ErrPoolImage is wrapped by the errors Restore returns for an image that does not fit the pool.
var ErrPoolImage = errors.New("pool image does not fit")

// Image returns the pool's state as data; value gives the host's image of each queued ticket's
// Value. It shares nothing with the pool.
func (p *Pool) Image(value func(*Ticket) (any, error)) (PoolImage, error) {
	img := PoolImage{Name: p.cfg.Name, InFlight: p.inflight, State: p.state, Failures: p.failures, Until: p.until,
		Probing: p.probing, Blocked: p.blocked, Stats: p.stats}
	if p.rpm != nil {
		img.RPM = p.rpm.image()
	}
	if p.tpm != nil {
		img.TPM = p.tpm.image()
	}
	for i := range p.queue.Len() {
		ti, err := ticketImage(p.queue.At(i), value)
		if err != nil {
			return PoolImage{}, err
		}
		img.Queue = append(img.Queue, ti)
	}
	for _, t := range p.retries {
		ti, err := ticketImage(t, value)
		if err != nil {
			return PoolImage{}, err
		}
		img.Retries = append(img.Retries, ti)
	}
	return img, nil
}

func ticketImage(t *Ticket, value func(*Ticket) (any, error)) (TicketImage, error) {
	v, err := value(t)
	if err != nil {
		return TicketImage{}, err
	}
	return t.Image(v), nil
}

// Restore gives a pool that never admitted a ticket the state img holds; value makes each
// ticket's Value again from its image (the ticket it is given is the restored one, in this pool).
func (p *Pool) Restore(img *PoolImage, value func(*Ticket, any) (any, error)) error {
	if img.Name != p.cfg.Name {
		return fmt.Errorf("%w: the image of pool %s given to pool %s", ErrPoolImage, img.Name, p.cfg.Name)
	}
	if p.inflight != 0 || p.queue.Len() != 0 || len(p.retries) != 0 || p.stats != (Stats{}) {
		return fmt.Errorf("%w: pool %s is in use", ErrPoolImage, p.cfg.Name)
	}
	if (len(img.RPM) > 0 && p.rpm == nil) || (len(img.TPM) > 0 && p.tpm == nil) {
		return fmt.Errorf("%w: pool %s has no rate limit for the image's reservations", ErrPoolImage, p.cfg.Name)
	}
	p.inflight, p.state, p.failures, p.until, p.probing, p.blocked, p.stats =
		img.InFlight, img.State, img.Failures, img.Until, img.Probing, img.Blocked, img.Stats
	if p.rpm != nil {
		p.rpm.restore(img.RPM)
	}
	if p.tpm != nil {
		p.tpm.restore(img.TPM)
	}
	for i := range img.Queue {
		t, err := restoreTicket(p, &img.Queue[i], value)
		if err != nil {
			return err
		}
		p.queue.PushBack(t)
	}
	for i := range img.Retries {
		t, err := restoreTicket(p, &img.Retries[i], value)
		if err != nil {
			return err
		}
		p.retries = append(p.retries, t)
	}
	return nil
}

func restoreTicket(p *Pool, img *TicketImage, value func(*Ticket, any) (any, error)) (*Ticket, error) {
	t := img.Ticket(p, nil)
	v, err := value(t, img.Value)
	if err != nil {
		return nil, fmt.Errorf("%w: pool %s, agent %d's turn %d: %w", ErrPoolImage, p.cfg.Name, img.Agent, img.Turn, err)
	}
	t.Value = v
	return t, nil
}
