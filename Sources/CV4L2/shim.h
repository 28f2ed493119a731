#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
