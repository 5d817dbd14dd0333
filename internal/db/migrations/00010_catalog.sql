-- Catalog and stock behind pricing.get_realtime_quote (and the product facts
-- shipping, duties and compliance read by SKU). Prices are integers in the
-- minor unit of the product's base currency; the quote converts them with
-- the versioned FX table in commerce/data. Dangerous-goods facts (UN
-- number, battery watt-hours, liquid volume, alcohol strength) are columns,
-- not free text, because compliance rules compare them with limits.
-- +goose Up
CREATE TABLE catalog_products (
    sku              text PRIMARY KEY CHECK (sku ~ '^[A-Z0-9][A-Z0-9-]{2,31}$'),
    title            text NOT NULL CHECK (length(title) BETWEEN 3 AND 200),
    category         text NOT NULL CHECK (category ~ '^[a-z][a-z_]{1,39}$'),
    base_price_minor bigint NOT NULL CHECK (base_price_minor > 0),
    base_currency    text NOT NULL CHECK (base_currency ~ '^[A-Z]{3}$'),
    weight_grams     integer NOT NULL CHECK (weight_grams > 0),
    length_mm        integer NOT NULL CHECK (length_mm > 0),
    width_mm         integer NOT NULL CHECK (width_mm > 0),
    height_mm        integer NOT NULL CHECK (height_mm > 0),
    hs_code          text NOT NULL CHECK (hs_code ~ '^[0-9]{6}$'),
    origin_country   text NOT NULL CHECK (origin_country ~ '^[A-Z]{2}$'),
    -- UN number of the dangerous good the item is or contains (UN3480
    -- lithium-ion batteries, UN3481 … contained in equipment, UN1266
    -- perfumery products, UN1950 aerosols, …), NULL when none.
    un_number        text CHECK (un_number ~ '^UN[0-9]{4}$'),
    battery_wh       numeric(6,1) CHECK (battery_wh > 0),
    volume_ml        integer CHECK (volume_ml > 0),
    abv_percent      numeric(4,1) CHECK (abv_percent >= 0 AND abv_percent <= 100),
    active           boolean NOT NULL DEFAULT true,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- Stock is its own table: it changes far more often than product facts,
-- and a real upstream (WMS) would own it.
CREATE TABLE catalog_stock (
    sku        text PRIMARY KEY REFERENCES catalog_products (sku),
    on_hand    integer NOT NULL CHECK (on_hand >= 0),
    reserved   integer NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= on_hand),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE catalog_stock;
DROP TABLE catalog_products;
