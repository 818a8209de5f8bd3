/* Opening the files a user may be sent (snapshots, TetGen and OBJ meshes) as untrusted input. */
#ifndef PBD_FILE_IN_H
#define PBD_FILE_IN_H

#include <stdint.h>
#include <stdio.h>

#include "core/core.h"

/* Opens `path` for reading only when it names a regular file: a FIFO, a device, a socket or a
 * directory is refused with PBD_ERR_IO and a one-line message before a byte is read, since
 * reading one could block forever (a FIFO without a writer) or never end (/dev/zero). On POSIX
 * systems the open itself does not block. `size` (may be NULL) receives the file's size. */
pbd_status pbd_file_open_regular(const char* path, FILE** out, uint64_t* size, pbd_error* err);

#endif
