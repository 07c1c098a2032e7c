package server

import (
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// CA is the endpoint of the cluster's certificate authority, which backs
// Nova's os-certificates API: the root certificate, and certificates for
// users. It answers from the configured CA (tls ca_file + ca_key_file)
// when there is one; otherwise the leader creates a cluster CA on first
// use and commits it, so every server answers with the same root.
type CA struct{ srv *Server }

// userCertDays is the validity of os-certificates user certificates.
const userCertDays = 365

// Root returns the root certificate in PEM.
func (e *CA) Root(args *structs.CARootRequest, reply *structs.CARootResponse) error {
	if ca := e.srv.config.CA; ca != nil {
		reply.CertPEM = ca.CertPEM
		return nil
	}
	if done, err := e.srv.forward("CA.Root", args, args, reply); done {
		return err
	}
	ca, err := e.srv.clusterCA()
	if err != nil {
		return err
	}
	reply.CertPEM = ca.CertPEM
	return nil
}

// IssueUser creates a key pair and a certificate for a user of a
// project, signed by the CA.
func (e *CA) IssueUser(args *structs.CAIssueUserRequest, reply *structs.CAIssueUserResponse) error {
	if args.UserID == "" || args.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "a user certificate needs a user and a project")
	}
	ca := e.srv.config.CA
	if ca == nil {
		if done, err := e.srv.forward("CA.IssueUser", args, args, reply); done {
			return err
		}
		var err error
		if ca, err = e.srv.clusterCA(); err != nil {
			return err
		}
	}
	certPEM, keyPEM, err := ca.IssueUser(args.ProjectID, args.UserID, userCertDays)
	if err != nil {
		return fmt.Errorf("issue a certificate for user %s: %w", args.UserID, err)
	}
	reply.CertPEM, reply.KeyPEM = certPEM, keyPEM
	return nil
}

// clusterCA returns the replicated cluster CA, creating and committing it
// first when the state has none. Only the leader calls it. Creation
// happens here, outside the FSM (keys are random); if two leaders in
// turn race, the FSM keeps the first CA committed and both read it back.
func (s *Server) clusterCA() (*tlsutil.CA, error) {
	rec, err := s.fsm.State().ClusterCA(nil)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: "Stratus Cluster CA " + s.config.Region})
		if err != nil {
			return nil, err
		}
		req := &structs.ClusterCASetRequest{CA: &structs.ClusterCA{CertPEM: certPEM, KeyPEM: keyPEM, CreatedAt: time.Now().UnixNano()}}
		if _, err := s.apply(structs.ClusterCASetType, req); err != nil {
			return nil, fmt.Errorf("commit the cluster CA: %w", err)
		}
		if rec, err = s.fsm.State().ClusterCA(nil); err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, structs.Errorf(structs.KindInternal, "the cluster CA was committed but is not in the state")
		}
		s.logger.Info("created the cluster certificate authority", "index", rec.CreateIndex)
	}
	ca, err := tlsutil.ParseCA(rec.CertPEM, rec.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("cluster CA in the state: %w", err)
	}
	return ca, nil
}
