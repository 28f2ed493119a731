#ifndef PRISM_CHTTPSHIMS_H
#define PRISM_CHTTPSHIMS_H

// What Swift cannot call in libmicrohttpd: MHD_get_connection_info is variadic, and Swift does not
// import variadic C functions. Kept apart from CShims so that only the preview server links MHD.

struct MHD_Connection;

/// The connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD), or -1.
int prism_mhd_connection_fd(struct MHD_Connection *connection);

#endif
