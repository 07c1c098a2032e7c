variable "zones" {
  type    = list(string)
  default = ["a", "b"]
}

locals {
  name = format("%s-%d", "api", 2)
}

instance "api" {
  count     = length(var.zones) + 1
  flavor    = lower("M1.TINY")
  image     = join("-", ["ubuntu", "24.04"])
  metadata  = { zones = join(",", concat(var.zones, ["c"])), name = upper(local.name), b64 = base64encode("hi") }
  user_data = jsonencode({ hostname = local.name })
  constraint {
    attribute = "host.name"
    operator  = "regexp"
    value     = "^cmp-"
  }
  constraint {
    attribute = "host.hypervisor_version"
    operator  = "version"
    value     = ">= 8.0"
  }
  update {
    max_parallel     = 2
    health_check     = "none"
    min_healthy_time = "0s"
  }
}
