// Package teststorage gives tests a started file_storage extension and a host that offers it,
// for components that keep state in a storage extension.
package teststorage

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// ID is the id the host offers the extension under: file_storage.
var ID = component.MustNewID("file_storage")

// Host is a component host whose only extension is the file storage.
type Host struct {
	component.Host
	exts map[component.ID]component.Component
}

// GetExtensions returns the file storage under ID.
func (h Host) GetExtensions() map[component.ID]component.Component { return h.exts }

// Start starts a file_storage extension keeping its files in dir (the same dir after a
// "restart" gives the same state). The caller shuts the extension down, which a restart test
// does between the two lives of its component.
func Start(t testing.TB, dir string) (Host, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory, cfg.Compaction.Directory = dir, dir
	require.NoError(t, cfg.Validate())
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return Host{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{ID: ext}}, ext
}
