#!/usr/bin/env bash
set -euo pipefail
echo "loopback_users = none" > /etc/rabbitmq/rabbitmq.conf
echo "default_user = ${RABBITMQ_DEFAULT_USER:-mailyard}" >> /etc/rabbitmq/rabbitmq.conf
echo "default_pass = ${RABBITMQ_DEFAULT_PASS:-mailyard}" >> /etc/rabbitmq/rabbitmq.conf
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq
exec su rabbitmq -s /bin/sh -c "exec rabbitmq-server"
