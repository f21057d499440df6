#!/bin/sh
# Deploy the shop to the staging cluster.
set -eu

kubectl apply -f k8s/
