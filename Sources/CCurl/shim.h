#ifndef FAMCTL_CCURL_SHIM_H
#define FAMCTL_CCURL_SHIM_H
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift does not
// call: these wrappers give each kind of value a typed entry point.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef size_t (*famctl_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*famctl_curl_progress_callback)(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                                             curl_off_t uploadTotal, curl_off_t uploaded);

static inline CURLcode famctl_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_callback(CURL *handle, CURLoption option, famctl_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode famctl_curl_set_progress(CURL *handle, famctl_curl_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
/// Each connection keeps at most 128 KiB not yet sent in its socket's
/// buffer (TCP_NOTSENT_LOWAT): libcurl's upload count then follows what the
/// network takes, and a slow uplink is not mistaken for a stalled server
/// once a whole body sits in a multi-megabyte buffer.
static int famctl_curl_sockopt(void *context, curl_socket_t fd, curlsocktype purpose) {
    (void)context;
#ifdef TCP_NOTSENT_LOWAT
    if (purpose == CURLSOCKTYPE_IPCXN) {
        int lowat = 128 * 1024;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
    }
#endif
    return CURL_SOCKOPT_OK;
}
static inline CURLcode famctl_curl_limit_unsent(CURL *handle) {
    return curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, famctl_curl_sockopt);
}
static inline CURLcode famctl_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode famctl_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode famctl_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
