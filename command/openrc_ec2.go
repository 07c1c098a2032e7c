package command

import (
	"fmt"
	"strings"
)

// openrcEC2 prints the AWS_* variables the AWS CLI and SDKs read for the
// EC2 API at /ec2/ (cloudctl openrc -format ec2): a new EC2 credential of
// the user on the project (Keystone's OS-EC2, as `s3 credentials
// create`), the agent's region and the endpoint. Each run issues a
// credential: the secret is only known when it is made.
func openrcEC2(e *env, user, project string) int {
	self, err := e.client.Agent().Self()
	if err != nil {
		return e.fail("Error reading the agent's region: %v", err)
	}
	c, _, err := e.client.S3().CreateCredential(user, project)
	if err != nil {
		return e.fail("Error creating an EC2 credential for %s on %s: %v", user, project, err)
	}
	vars := [][2]string{
		{"AWS_ACCESS_KEY_ID", c.Access},
		{"AWS_SECRET_ACCESS_KEY", c.Secret},
		{"AWS_DEFAULT_REGION", self.Config.Region},
		{"AWS_ENDPOINT_URL_EC2", strings.TrimSuffix(e.client.Address(), "/") + "/ec2/"},
	}
	if cacert := caCertFile(e); cacert != "" {
		vars = append(vars, [2]string{"AWS_CA_BUNDLE", cacert})
	}
	for _, v := range vars {
		fmt.Fprintf(e.ui.Stdout, "export %s=%s\n", v[0], shellQuote(v[1]))
	}
	return 0
}
