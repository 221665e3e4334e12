// The client-go contender of the bench (bench/README.md, "client-go"): one SharedInformerFactory informer
// over pods, the way a Go controller caches them, measured the way the JavaScript contenders measure
// themselves (bench/lib/common.mjs): time from start to synced, CPU of this process to synced, memory
// retained by the cache after a GC, and peak RSS (getrusage ru_maxrss, the counter Node's
// process.resourceUsage().maxRSS reads).
//
// This file is ours. It is built by bench/lib/client-go.mjs against the client-go of a vendored Kubernetes
// tree (staging/src/k8s.io/client-go), offline: the file is overlaid into the tree with `go build -overlay`,
// nothing is written into the tree, and no binary is committed.
//
// Output, one JSON object per line on stdout:
//   - with -watch-events N: {"phase":"synced", ...} once synced, then the watch figures after N updates;
//   - otherwise the sync figures.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// cpuMs is this process's user + system CPU time so far, in milliseconds.
func cpuMs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	us := ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
	return float64(us) / 1000
}

// peakRssBytes is the peak resident set of this process so far (Linux reports ru_maxrss in KiB).
func peakRssBytes() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}

// heapLive is the heap in use after a full collection (the Go counterpart of V8's heapUsed after gc()).
func heapLive() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

func emit(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(append(b, '\n'))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "client-go contender: %v\n", err)
	os.Exit(1)
}

// stripManagedFields is the transform a Go controller uses to keep managedFields out of its cache
// (controller-runtime's cache.TransformStripManagedFields does the same).
func stripManagedFields(obj any) (any, error) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		a.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	namespace := flag.String("namespace", "", "namespace to cache (empty: all namespaces)")
	strip := flag.Bool("strip-managed-fields", false, "drop metadata.managedFields in the informer's transform")
	protobuf := flag.Bool("protobuf", false, "ask for application/vnd.kubernetes.protobuf instead of JSON")
	noGzip := flag.Bool("disable-compression", false, "do not ask for gzip'd replies (rest.Config.DisableCompression)")
	objects := flag.Int("objects", 0, "pods expected in the cache once synced (0: take what the list had)")
	watchEvents := flag.Int("watch-events", 0, "after sync, count this many updates and report watch figures")
	watchTag := flag.String("watch-tag", "", "with -watch-events: count only the first update of each pod whose "+
		"bench.kubeloop.dev/seq annotation starts with this tag and a dash (a relist's synthetic updates do not count)")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	flag.Parse()
	if *kubeconfig == "" {
		fail(fmt.Errorf("-kubeconfig is required"))
	}
	time.AfterFunc(*timeout, func() { fail(fmt.Errorf("timed out after %s", *timeout)) })

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	if *protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	cfg.DisableCompression = *noGzip
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}
	opts := []informers.SharedInformerOption{}
	if *namespace != "" {
		opts = append(opts, informers.WithNamespace(*namespace))
	}
	if *strip {
		opts = append(opts, informers.WithTransform(stripManagedFields))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	informer := factory.Core().V1().Pods().Informer()

	var adds, updates atomic.Int64
	var firstUpdate atomic.Bool
	// one handler goroutine calls UpdateFunc (client-go's processorListener), so the set needs no lock
	seen := map[string]struct{}{}
	var tFirst time.Time
	var cpuFirst float64
	lastUpdate := make(chan struct{})
	target := int64(*watchEvents)
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { adds.Add(1) },
		UpdateFunc: func(_, n any) {
			pod, ok := n.(*corev1.Pod)
			if !ok {
				return
			}
			if *watchTag != "" {
				if !strings.HasPrefix(pod.Annotations["bench.kubeloop.dev/seq"], *watchTag+"-") {
					return
				}
				if _, dup := seen[pod.Name]; dup {
					return
				}
				seen[pod.Name] = struct{}{}
			}
			if firstUpdate.CompareAndSwap(false, true) {
				tFirst = time.Now()
				cpuFirst = cpuMs()
			}
			if updates.Add(1) == target {
				close(lastUpdate)
			}
		},
	})
	if err != nil {
		fail(err)
	}

	before := heapLive()
	cpu0 := cpuMs()
	t0 := time.Now()
	stop := make(chan struct{})
	factory.Start(stop)
	// cache.WaitForCacheSync polls every 100 ms; a 1 ms poll times the sync as closely as the JavaScript
	// contenders' promises do, for a negligible cost.
	for !informer.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	tSynced := time.Since(t0)
	cpuSynced := cpuMs() - cpu0
	want := int64(*objects)
	if want == 0 {
		want = int64(len(informer.GetStore().ListKeys()))
	}
	// every add handed to the handler, as the JavaScript contenders wait for theirs
	for adds.Load() < want {
		time.Sleep(time.Millisecond)
	}
	peak := peakRssBytes()
	cached := len(informer.GetStore().ListKeys())
	if *objects > 0 && cached != *objects {
		fail(fmt.Errorf("cached %d of %d pods", cached, *objects))
	}
	time.Sleep(300 * time.Millisecond)
	retained := int64(heapLive()) - int64(before)
	ms := float64(tSynced.Microseconds()) / 1000
	synced := map[string]any{
		"opsPerSec":              int64(float64(cached) / ms * 1000),
		"objects":                cached,
		"timeToSyncedMs":         round1(ms),
		"cpuToSyncedMs":          round1(cpuSynced),
		"retainedBytes":          retained,
		"retainedBytesPerObject": retained / int64(max(cached, 1)),
		"peakRssBytes":           peak,
		"goVersion":              runtime.Version(),
		"gomaxprocs":             runtime.GOMAXPROCS(0),
		"gogc":                   debug.SetGCPercent(-1),
		"protobuf":               *protobuf,
		"stripManagedFields":     *strip,
		"disableCompression":     *noGzip,
	}
	debug.SetGCPercent(synced["gogc"].(int))
	if *watchEvents == 0 {
		emit(synced)
		os.Exit(0)
	}
	synced["phase"] = "synced"
	emit(synced)

	<-lastUpdate
	wall := time.Since(tFirst)
	cpu := cpuMs() - cpuFirst
	n := float64(max(target-1, 1))
	wallMs := float64(wall.Microseconds()) / 1000
	emit(map[string]any{
		"phase":         "watched",
		"opsPerSec":     int64(n / wallMs * 1000),
		"events":        target,
		"objects":       len(informer.GetStore().ListKeys()),
		"wallMs":        round1(wallMs),
		"cpuMs":         round1(cpu),
		"cpuUsPerEvent": float64(int64(cpu*1000/n*100+0.5)) / 100,
		"coresBusy":     float64(int64(cpu/wallMs*100+0.5)) / 100,
		"peakRssBytes":  peakRssBytes(),
	})
	close(stop)
	os.Exit(0)
}
