# A web tier: three servers kept apart, rolled one at a time.
variable "count" {
  type        = number
  default     = 3
  description = "How many web servers."
  validation {
    condition     = var.count >= 1 && var.count <= 10
    error_message = "Between 1 and 10 web servers."
  }
}

variable "env" {
  type    = string
  default = "prod"
}

variable "extra_meta" {
  type    = map(string)
  default = {}
}

locals {
  role = "web"
  meta = merge({ role = local.role, env = var.env }, var.extra_meta)
}

instance "web" {
  count             = var.count
  flavor            = "m1.small"
  image             = "debian-12"
  availability_zone = "nova"
  key_name          = "ops"
  metadata          = local.meta
  user_data         = file("cloud-init.yaml")

  network "private" {}

  placement {
    policy = "anti-affinity"
  }

  constraint {
    attribute = "host.arch"
    value     = "x86_64"
  }

  update {
    max_parallel     = 1
    health_check     = "active"
    min_healthy_time = "10s"
  }
}
