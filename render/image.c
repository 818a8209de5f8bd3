/* PNG files through stb_image_write (Debian's libstb). */
#include <errno.h>
#include <string.h>

#include <stb_image_write.h>

#include "render_internal.h"

bool pbd_render_write_png(const char* path, int width, int height, const uint8_t* rgb, pbd_error* err) {
	if (!path || !rgb || width < 1 || height < 1 || width > PBD_RENDER_MAX_SIZE || height > PBD_RENDER_MAX_SIZE)
		return render_fail(err, "%s: bad image (%dx%d)", path ? path : "(null)", width, height);
	/* stb reports failure without a reason; errno still holds the one of fopen or fwrite. */
	errno = 0;
	if (!stbi_write_png(path, width, height, 3, rgb, width * 3))
		return render_fail(err, "%s: cannot write PNG: %s", path, errno ? strerror(errno) : "encoder failed");
	return true;
}
