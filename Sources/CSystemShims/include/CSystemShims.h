// CSystemShims: libc calls Swift cannot make directly. Links nothing beyond libc, so every layer
// (GPU, media, the engine) may use it.
#ifndef PRISM_CSYSTEMSHIMS_H
#define PRISM_CSYSTEMSHIMS_H

/// Names the calling thread (pthread_setname_np is a GNU extension Swift does not see); at most 15 bytes.
void prism_set_current_thread_name(const char *name);

/// ioctl with one pointer argument, retried on EINTR (ioctl is variadic, which Swift cannot call).
int prism_ioctl(int fd, unsigned long request, void *arg);

/// A file's birth time in nanoseconds since the epoch, without following a final symlink (statx, a GNU
/// extension Swift does not see); 0 when the file system does not keep one, -1 on error (errno set).
long long prism_birth_time_ns(const char *path);

#endif
