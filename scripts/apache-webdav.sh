#!/usr/bin/env bash
# A minimal Apache httpd with mod_dav/mod_dav_fs on 127.0.0.1, for the WebDAV
# peer tests and for trying famctl --peer by hand.
#
#   scripts/apache-webdav.sh start BASE   # prints "ready http://127.0.0.1:PORT/dav/"
#   scripts/apache-webdav.sh stop BASE    # stops it and removes BASE
#
# /ro/ serves the same collection read-only (writes answer 403), as a share
# a login may only read; /nodot/ serves it refusing names that start with a
# dot (403), as many servers do; /full/ serves it as a server with no room
# left (writes answer 507 Insufficient Storage), /noblobs/ likewise for the
# photos' blobs alone, and /broken/ as a server failing (500) on every write
# into a device's folder; /flaky/ fails (500) on every read of a segment in
# the folder of a device whose id names a file BASE/fail-reads-ID. With WEBDAV_USER and WEBDAV_PASSWORD set, /dav asks for that login (HTTP
# Basic, a 401 with WWW-Authenticate otherwise). With WEBDAV_TLS=1 it serves
# https:// with a self-signed certificate for 127.0.0.1, written to
# BASE/cert.pem (what FAMCTL_PEER_CA_FILE names to trust it).
set -euo pipefail
cmd=${1:?start|stop}; BASE=${2:?base directory}
MODS=/usr/lib/apache2/modules
stop() {
  if [ -f "$BASE/httpd.pid" ]; then
    pid=$(cat "$BASE/httpd.pid"); kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$BASE"
}
[ "$cmd" = stop ] && { stop; exit 0; }
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] || { echo "missing: apache2 (make setup installs it)" >&2; exit 69; }
# A port below the kernel's ephemeral range (32768 and up), so that no
# outgoing connection holds it; another taken one is tried below.
pick_port() { echo $(( 20000 + (RANDOM + $$) % 12000 )); }
PORT=${WEBDAV_PORT:-$(pick_port)}
rm -rf "$BASE"; mkdir -p "$BASE/root/dav" "$BASE/lock" "$BASE/run"
user=$(id -un); group=$(id -gn)
if [ "$(id -u)" = 0 ]; then user=www-data; group=www-data; chown -R www-data:www-data "$BASE/root" "$BASE/lock" "$BASE/run"; fi
auth_modules=""; auth_location=""; auth_config=""; auth_require=""; login=(); tls_modules=""; tls_server=""; scheme=http
if [ "${WEBDAV_TLS:-}" = 1 ]; then
  command -v openssl >/dev/null || { echo "missing: openssl (make setup installs it)" >&2; exit 69; }
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$BASE/key.pem" -out "$BASE/cert.pem" >/dev/null 2>&1
  [ "$(id -u)" = 0 ] && chown www-data:www-data "$BASE/key.pem"
  tls_modules="LoadModule socache_shmcb_module $MODS/mod_socache_shmcb.so
LoadModule ssl_module $MODS/mod_ssl.so"
  tls_server="SSLEngine on
SSLCertificateFile $BASE/cert.pem
SSLCertificateKeyFile $BASE/key.pem
SSLSessionCache shmcb:$BASE/run/ssl_scache(512000)"
  login+=(--cacert "$BASE/cert.pem")
  scheme=https
fi
if [ -n "${WEBDAV_USER:-}" ]; then
  htpasswd -bc "$BASE/htpasswd" "$WEBDAV_USER" "${WEBDAV_PASSWORD:?WEBDAV_PASSWORD with WEBDAV_USER}" >/dev/null 2>&1
  [ "$(id -u)" = 0 ] && chown www-data:www-data "$BASE/htpasswd"
  auth_modules="LoadModule auth_basic_module $MODS/mod_auth_basic.so
LoadModule authn_core_module $MODS/mod_authn_core.so
LoadModule authn_file_module $MODS/mod_authn_file.so
LoadModule authz_user_module $MODS/mod_authz_user.so"
  auth_config="  AuthType Basic
  AuthName famctl
  AuthUserFile $BASE/htpasswd"
  auth_require="    Require valid-user"
  auth_location="$auth_config
  Require valid-user"
  login+=(-u "$WEBDAV_USER:$WEBDAV_PASSWORD")
fi
write_conf() {
cat >"$BASE/httpd.conf" <<CONF
ServerRoot "$BASE"
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile "$BASE/httpd.pid"
ErrorLog "$BASE/error.log"
LogLevel warn
User $user
Group $group
LoadModule mpm_event_module $MODS/mod_mpm_event.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule dav_module $MODS/mod_dav.so
LoadModule dav_fs_module $MODS/mod_dav_fs.so
LoadModule alias_module $MODS/mod_alias.so
LoadModule rewrite_module $MODS/mod_rewrite.so
$auth_modules
$tls_modules
$tls_server
LogFormat "%m %U %>s %B" famctl
CustomLog "$BASE/access.log" famctl
DocumentRoot "$BASE/root"
DavLockDB "$BASE/lock/davlock"
Mutex file:$BASE/run default
<Directory "$BASE/root">
  Require all granted
</Directory>
<Location "/dav">
  Dav On
$auth_location
</Location>
Alias /nodot "$BASE/root/dav"
<Location "/nodot">
  Dav On
$auth_location
</Location>
<LocationMatch "^/nodot/(.*/)?[.]">
  Require all denied
</LocationMatch>
Alias /ro "$BASE/root/dav"
<Location "/ro">
  Dav On
$auth_config
  # Both: the login (when one is set) and a method that only reads.
  <RequireAll>
    Require method GET HEAD OPTIONS PROPFIND
$auth_require
  </RequireAll>
</Location>
Alias /full "$BASE/root/dav"
<Location "/full">
  Dav On
$auth_location
</Location>
Alias /noblobs "$BASE/root/dav"
<Location "/noblobs">
  Dav On
$auth_location
</Location>
Alias /broken "$BASE/root/dav"
<Location "/broken">
  Dav On
$auth_location
</Location>
Alias /flaky "$BASE/root/dav"
<Location "/flaky">
  Dav On
$auth_location
</Location>
RewriteEngine On
RewriteCond %{REQUEST_METHOD} ^(PUT|MKCOL|COPY|MOVE)$
RewriteRule ^/full/ - [R=507,L]
RewriteCond %{REQUEST_METHOD} ^PUT$
RewriteRule ^/noblobs/[^/]+/blobs/ - [R=507,L]
RewriteCond %{REQUEST_METHOD} ^(PUT|MKCOL)$
RewriteRule ^/broken/[^/]+/[0-9a-f]{64}/ - [R=500,L]
RewriteCond %{REQUEST_METHOD} ^GET$
RewriteCond $BASE/fail-reads-\$1 -f
RewriteRule ^/flaky/[^/]+/([0-9a-f]{64})/[^/]+[.]seg$ - [R=500,L]
CONF
}
# A port some other program holds (a test's Syncthing, another server):
# another one, unless WEBDAV_PORT named it.
for attempt in $(seq 10); do
  write_conf
  : >"$BASE/error.log"
  /usr/sbin/apache2 -f "$BASE/httpd.conf" -k start 2>>"$BASE/error.log" && break
  if [ -z "${WEBDAV_PORT:-}" ] && grep -q "Address already in use" "$BASE/error.log" && [ "$attempt" -lt 10 ]; then
    PORT=$(pick_port); continue
  fi
  echo "apache did not start:" >&2; cat "$BASE/error.log" >&2; stop; exit 1
done
for _ in $(seq 100); do
  curl -fsS --max-time 5 -o /dev/null "${login[@]}" -X PROPFIND -H 'Depth: 0' "$scheme://127.0.0.1:$PORT/dav/" 2>/dev/null && { echo "ready $scheme://127.0.0.1:$PORT/dav/"; exit 0; }
  sleep 0.1
done
echo "apache did not start:" >&2; cat "$BASE/error.log" >&2; stop; exit 1
