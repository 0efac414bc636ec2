// Command etcd: etcd's own entry point (go.etcd.io/etcd/v3's main.go calls the same function).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
