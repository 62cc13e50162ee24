//go:build openblas

package openblas

// #cgo LDFLAGS: -lopenblas
// #define _GNU_SOURCE
// #include <dlfcn.h>
// #include <stdlib.h>
// void openblas_set_num_threads(int);
// char *openblas_get_corename(void);
//
// // setCore makes OpenBLAS choose its kernels again, as it does when
// // the library loads, with OPENBLAS_CORETYPE set to name for the
// // choice only. It returns 0 when the library was built for one
// // processor (no DYNAMIC_ARCH), which has no choice to make again.
// static int setCore(const char *name) {
// 	void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
// 	void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
// 	if (quit == NULL || init == NULL) return 0;
// 	setenv("OPENBLAS_CORETYPE", name, 1);
// 	quit();
// 	init();
// 	unsetenv("OPENBLAS_CORETYPE");
// 	return 1;
// }
import "C"

import (
	"os"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	C.openblas_set_num_threads(1)
	// Before any product: the kernels are a table OpenBLAS reads at each
	// call, and the buffers it allocates on the first call do not depend
	// on them. A user's OPENBLAS_CORETYPE is theirs to keep.
	if _, set := os.LookupEnv("OPENBLAS_CORETYPE"); !set {
		if name := betterCore(Core(), thisCPU()); name != "" {
			cname := C.CString(name)
			C.setCore(cname)
			C.free(unsafe.Pointer(cname))
		}
	}
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
}

// Core is the name of the kernel set OpenBLAS runs ("SkylakeX",
// "Haswell", "Zen", ...), for a run's log.
func Core() string {
	return C.GoString(C.openblas_get_corename())
}

// Name says which BLAS the products run on, for a run's log:
// "openblas/" and the kernel set.
func Name() string { return "openblas/" + Core() }
