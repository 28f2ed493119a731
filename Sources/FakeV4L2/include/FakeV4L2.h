// FakeV4L2 exports no API of its own: it is loaded with LD_PRELOAD and replaces open/openat/close/ioctl/
// mmap/munmap for the device paths named in its environment (see fake_v4l2.c for the variables).
// SwiftPM wants a public header directory for every C target; this is it.
#ifndef PRISM_FAKE_V4L2_H
#define PRISM_FAKE_V4L2_H
#endif
