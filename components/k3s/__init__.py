"""k3s on your own hosts over SSH: servers (embedded etcd for HA), agents, GPU pools and local storage."""
