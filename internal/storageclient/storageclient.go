// Package storageclient finds the storage extension a component's config names and opens the
// component's client on it, with the errors a user can act on.
package storageclient

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Open returns the storage client of the component owner (of kind) on the storage extension
// storageID.
func Open(ctx context.Context, host component.Host, storageID component.ID, kind component.Kind, owner component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[storageID]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found; add it under extensions and service.extensions", storageID)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", storageID)
	}
	client, err := se.GetClient(ctx, kind, owner, "")
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return client, nil
}
