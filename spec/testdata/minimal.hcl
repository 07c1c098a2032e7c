instance "db" {
  flavor = "m1.tiny"
  image  = "cirros"
}
