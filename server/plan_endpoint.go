package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Plan is the endpoint scheduler workers submit plans to.
type Plan struct{ srv *Server }

// Submit queues a plan for the leader's applier and returns what it
// committed.
func (p *Plan) Submit(args *structs.PlanSubmitRequest, reply *structs.PlanResult) error {
	if done, err := p.srv.forward("Plan.Submit", args, args, reply); done {
		return err
	}
	if args.Plan == nil {
		return structs.Errorf(structs.KindInvalid, "no plan")
	}
	res, err := p.srv.submitPlan(args.Plan)
	if err != nil {
		return err
	}
	*reply = *res
	return nil
}
