#define _GNU_SOURCE  // pthread_setname_np
#include <pthread.h>
#include "CSystemShims.h"
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>

void prism_set_current_thread_name(const char *name) {
    char truncated[16];
    snprintf(truncated, sizeof truncated, "%s", name);
    pthread_setname_np(pthread_self(), truncated);
}

int prism_ioctl(int fd, unsigned long request, void *arg) {
    int result;
    do { result = ioctl(fd, request, arg); } while (result == -1 && errno == EINTR);
    return result;
}
