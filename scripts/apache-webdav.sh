#!/usr/bin/env bash
# A minimal Apache httpd with mod_dav/mod_dav_fs on 127.0.0.1, for the WebDAV
# peer tests and for trying famctl --peer by hand.
#
#   scripts/apache-webdav.sh start BASE   # prints "ready http://127.0.0.1:PORT/dav/"
#   scripts/apache-webdav.sh stop BASE    # stops it and removes BASE
#
# With WEBDAV_USER and WEBDAV_PASSWORD set, /dav asks for that login (HTTP
# Basic, a 401 with WWW-Authenticate otherwise).
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
PORT=${WEBDAV_PORT:-$(( 20000 + ($$ % 20000) ))}
rm -rf "$BASE"; mkdir -p "$BASE/root/dav" "$BASE/lock" "$BASE/run"
user=$(id -un); group=$(id -gn)
if [ "$(id -u)" = 0 ]; then user=www-data; group=www-data; chown -R www-data:www-data "$BASE/root" "$BASE/lock" "$BASE/run"; fi
auth_modules=""; auth_location=""; login=()
if [ -n "${WEBDAV_USER:-}" ]; then
  htpasswd -bc "$BASE/htpasswd" "$WEBDAV_USER" "${WEBDAV_PASSWORD:?WEBDAV_PASSWORD with WEBDAV_USER}" >/dev/null 2>&1
  [ "$(id -u)" = 0 ] && chown www-data:www-data "$BASE/htpasswd"
  auth_modules="LoadModule auth_basic_module $MODS/mod_auth_basic.so
LoadModule authn_core_module $MODS/mod_authn_core.so
LoadModule authn_file_module $MODS/mod_authn_file.so
LoadModule authz_user_module $MODS/mod_authz_user.so"
  auth_location="  AuthType Basic
  AuthName famctl
  AuthUserFile $BASE/htpasswd
  Require valid-user"
  login=(-u "$WEBDAV_USER:$WEBDAV_PASSWORD")
fi
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
$auth_modules
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
CONF
/usr/sbin/apache2 -f "$BASE/httpd.conf" -k start
for _ in $(seq 100); do
  curl -fsS -o /dev/null "${login[@]}" -X PROPFIND -H 'Depth: 0' "http://127.0.0.1:$PORT/dav/" 2>/dev/null && { echo "ready http://127.0.0.1:$PORT/dav/"; exit 0; }
  sleep 0.1
done
echo "apache did not start:" >&2; cat "$BASE/error.log" >&2; stop; exit 1
