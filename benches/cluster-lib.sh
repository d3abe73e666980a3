# Shared by benches/cluster.sh and benches/cluster-public.sh (sourced, in
# the work directory): starting the loopback cluster's processes and the
# throwaway PKI for mutual TLS on its hops.

pids=()
# Stops every process `start` started.
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); }

# start NAME COMMAND...: runs COMMAND in the background (stdout NAME.out,
# stderr NAME.log), waits for its "listening on ADDR" line and sets
# NAME_addr and NAME_pid; exits with its log if it dies first.
start() {
  local name=$1; shift
  # Emptied here, not only by the background redirection: the loop below
  # may run first and read the previous run's line.
  : > "$name.out"
  "$@" > "$name.out" 2> "$name.log" &
  pids+=($!)
  eval "${name}_pid=$!"
  for _ in $(seq 600); do
    grep -q "^listening on " "$name.out" 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$name.log" >&2; exit 1; }
    sleep 0.1
  done
  eval "${name}_addr=$(sed -n 's/^listening on //p' "$name.out" | head -1)"
}

# Mutual TLS on the cluster's hops (issues 27, 47): a throwaway CA in pki/,
# a certificate per role carrying its name (ROLE.dpincon-cluster), and the
# coordinator's client-facing one (localhost). Kept when already there.
make_pki() {
  [ -f pki/server.crt ] && return
  mkdir -p pki
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-ca \
    -keyout pki/ca.key -out pki/ca.crt 2>/dev/null
  local name san
  for name in scheduler executor coordinator server; do
    san="DNS:$name.dpincon-cluster"
    [ "$name" = server ] && san=DNS:localhost
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "pki/$name.ext"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "pki/$name.key" \
      -out "pki/$name.csr" 2>/dev/null
    openssl x509 -req -in "pki/$name.csr" -CA pki/ca.crt -CAkey pki/ca.key -CAcreateserial \
      -days 2 -extfile "pki/$name.ext" -out "pki/$name.crt" 2>/dev/null
  done
}

# The --cluster-* arguments of ROLE's certificate.
cluster_tls() { echo --cluster-ca pki/ca.crt --cluster-cert "pki/$1.crt" --cluster-key "pki/$1.key"; }
