-- Sample catalog for local use and tests: 48 products across the categories
-- a cross-border shop sells, including the ones dangerous-goods and
-- restricted-goods rules fire on (lithium batteries alone and in equipment,
-- perfume, aerosols, nail lacquer, blades, alcohol, lighters, vapes and
-- nicotine). Prices are in minor units of the base currency (JPY and KRW
-- have none: 16500 JPY is ¥16,500). HS codes are 6-digit HS 2022
-- subheadings; weights and dimensions are of the packed unit.
-- +goose Up
INSERT INTO catalog_products
    (sku, title, category, base_price_minor, base_currency, weight_grams, length_mm, width_mm, height_mm,
     hs_code, origin_country, un_number, battery_wh, volume_ml, abv_percent) VALUES
    ('VC-PB20K-BLK',     'Voltcore 20,000 mAh USB-C Power Bank (74 Wh), Black', 'power_bank', 4999, 'USD', 420, 180, 100, 40, '850760', 'CN', 'UN3480', 74.0, NULL, NULL),
    ('VC-PB10K-WHT',     'Voltcore 10,000 mAh Slim Power Bank (37 Wh), White', 'power_bank', 2999, 'USD', 230, 160, 90, 30, '850760', 'CN', 'UN3480', 37.0, NULL, NULL),
    ('NBK-14AIR-16-512', 'Norbook Air 14" Laptop, 16 GB RAM, 512 GB SSD', 'electronics', 109900, 'USD', 2100, 420, 290, 70, '847130', 'CN', 'UN3481', 57.0, NULL, NULL),
    ('PHN-X12-128-BLU',  'Lumen X12 Smartphone, 128 GB, Blue', 'electronics', 69900, 'USD', 480, 175, 95, 60, '851713', 'VN', 'UN3481', 16.0, NULL, NULL),
    ('AUD-BUDS3-BLK',    'Lumen Buds 3 Wireless Earbuds with Charging Case', 'electronics', 12900, 'USD', 150, 110, 110, 45, '851830', 'VN', 'UN3481', 1.9, NULL, NULL),
    ('DRN-MINI249-GRY',  'Skylark Mini 249 g Camera Drone with Intelligent Flight Battery', 'drone', 45900, 'USD', 900, 260, 200, 90, '880621', 'CN', 'UN3481', 18.1, NULL, NULL),
    ('VAPE-POD2-GRY',    'Nimbus Pod 2 E-Cigarette Starter Kit (850 mAh)', 'vape', 2499, 'GBP', 120, 120, 60, 30, '854340', 'CN', 'UN3481', 3.1, NULL, NULL),
    ('ELQ-NIC20-MINT10', 'Nicotine E-Liquid 10 ml, 20 mg/ml, Cool Mint', 'nicotine', 399, 'GBP', 40, 80, 30, 30, '240412', 'GB', NULL, NULL, 10, NULL),
    ('PRF-ROSE-EDP100',  'Maison Verre "Rose Absolue" Eau de Parfum 100 ml', 'fragrance', 13500, 'EUR', 420, 130, 90, 60, '330300', 'FR', 'UN1266', NULL, 100, NULL),
    ('DEO-AERO-150',     'Northfield Fresh Aerosol Deodorant 150 ml', 'aerosol', 499, 'GBP', 180, 200, 60, 60, '330720', 'GB', 'UN1950', NULL, 150, NULL),
    ('NLP-ROUGE-15',     'Atelier Rouge Nail Lacquer 15 ml, "Cerise"', 'cosmetics', 1800, 'EUR', 80, 60, 40, 40, '330430', 'FR', 'UN1263', NULL, 15, NULL),
    ('LIP-MATTE-ROSE',   'Atelier Rouge Matte Lipstick, "Rose Velours"', 'cosmetics', 3200, 'EUR', 40, 90, 30, 30, '330410', 'FR', NULL, NULL, NULL, NULL),
    ('CRM-SNAIL-50',     'Hanbit Snail Mucin Repair Cream 50 ml', 'cosmetics', 28000, 'KRW', 150, 80, 80, 70, '330499', 'KR', NULL, NULL, 50, NULL),
    ('SHP-ARGAN-250',    'Argan Oil Repair Shampoo 250 ml', 'cosmetics', 1299, 'USD', 300, 200, 70, 50, '330510', 'MA', NULL, NULL, 250, NULL),
    ('KNF-CHEF-20',      'Solinger Werk Chef''s Knife 20 cm, X50CrMoV15 Steel', 'blade', 8900, 'EUR', 380, 360, 80, 35, '821192', 'DE', NULL, NULL, NULL, NULL),
    ('KNF-SANTOKU-18',   'Seki Hamono Santoku 18 cm, VG-10 Damascus', 'blade', 16500, 'JPY', 300, 330, 70, 30, '821192', 'JP', NULL, NULL, NULL, NULL),
    ('KNF-POCKET-85',    'Alpine Folding Pocket Knife 85 mm, 7 Functions', 'blade', 3900, 'CHF', 120, 130, 60, 30, '821193', 'CH', NULL, NULL, NULL, NULL),
    ('WIN-BDX19-750',    'Chateau Lacombe Bordeaux Superieur 2019, 750 ml', 'alcohol', 2450, 'EUR', 1350, 340, 100, 100, '220421', 'FR', NULL, NULL, 750, 13.5),
    ('SAK-JUNMAI-720',   'Kurashiki Junmai Ginjo Sake 720 ml', 'alcohol', 3800, 'JPY', 1300, 320, 90, 90, '220600', 'JP', NULL, NULL, 720, 15.5),
    ('WSK-SPEY12-700',   'Speyside 12 Year Old Single Malt Scotch Whisky 70 cl', 'alcohol', 4800, 'GBP', 1500, 320, 100, 100, '220830', 'GB', NULL, NULL, 700, 40.0),
    ('LTR-BUTANE-REF',   'Flint & Flame Refillable Butane Jet Lighter', 'lighter', 1999, 'USD', 90, 100, 50, 20, '961310', 'CN', 'UN1057', NULL, NULL, NULL),
    ('TEE-ORG-M-WHT',    'Organic Cotton Crew T-Shirt, White, M', 'apparel', 2500, 'USD', 180, 300, 250, 20, '610910', 'BD', NULL, NULL, NULL, NULL),
    ('JNS-SLIM-32-IND',  'Selvedge Slim Jeans, Indigo, W32 L32', 'apparel', 8900, 'EUR', 750, 350, 280, 50, '620342', 'TR', NULL, NULL, NULL, NULL),
    ('SWT-MERINO-L-NVY', 'Merino Wool Crew Sweater, Navy, L', 'apparel', 9500, 'GBP', 400, 350, 280, 50, '611011', 'GB', NULL, NULL, NULL, NULL),
    ('SCF-SILK-90-PSL',  'Silk Twill Scarf 90 x 90 cm, Paisley', 'apparel', 14000, 'EUR', 120, 250, 250, 20, '621410', 'IT', NULL, NULL, NULL, NULL),
    ('JKT-DOWN-M-BLK',   '700-Fill Down Jacket, Black, M', 'apparel', 24900, 'USD', 900, 400, 350, 100, '620140', 'VN', NULL, NULL, NULL, NULL),
    ('SHO-RUN-42-BLU',   'Stride Runner Running Shoes, EU 42, Blue', 'footwear', 13000, 'USD', 900, 330, 220, 120, '640411', 'VN', NULL, NULL, NULL, NULL),
    ('BOT-CHEL-43-BRN',  'Goodyear-Welted Leather Chelsea Boots, EU 43, Brown', 'footwear', 26000, 'EUR', 1800, 360, 260, 130, '640391', 'PT', NULL, NULL, NULL, NULL),
    ('TOY-BRICK-FIRE',   'Brickworks City Fire Station, 540 Pieces', 'toys', 59995, 'DKK', 1200, 380, 260, 90, '950300', 'DK', NULL, NULL, NULL, NULL),
    ('TOY-PLUSH-BEAR30', 'Classic Plush Teddy Bear 30 cm', 'toys', 2499, 'GBP', 350, 320, 220, 180, '950300', 'CN', NULL, NULL, NULL, NULL),
    ('TOY-PUZ-1000-ALP', '1000-Piece Jigsaw Puzzle, "Alpine Lake"', 'toys', 1999, 'EUR', 800, 350, 250, 60, '950300', 'DE', NULL, NULL, NULL, NULL),
    ('COF-ETH-YIR-1KG',  'Ethiopia Yirgacheffe Roasted Coffee Beans 1 kg', 'coffee', 3200, 'EUR', 1050, 260, 160, 80, '090121', 'ET', NULL, NULL, NULL, NULL),
    ('COF-COL-SUP-250',  'Colombia Supremo Roasted Ground Coffee 250 g', 'coffee', 1295, 'USD', 270, 180, 90, 60, '090121', 'CO', NULL, NULL, NULL, NULL),
    ('TEA-CEY-OP-200',   'Ceylon Orange Pekoe Black Tea, Loose Leaf 200 g', 'food', 899, 'GBP', 230, 160, 80, 80, '090230', 'LK', NULL, NULL, NULL, NULL),
    ('CHO-DARK70-100',   'Belgian 70% Dark Chocolate Bar 100 g', 'food', 450, 'EUR', 110, 160, 80, 10, '180632', 'BE', NULL, NULL, NULL, NULL),
    ('OIL-EVOO-500',     'Extra Virgin Olive Oil, Cold Extracted, 500 ml', 'food', 1490, 'EUR', 900, 300, 70, 70, '150920', 'ES', NULL, NULL, 500, NULL),
    ('SYR-MAPLE-500',    'Pure Maple Syrup, Grade A Amber, 500 ml', 'food', 2199, 'CAD', 750, 250, 80, 80, '170220', 'CA', NULL, NULL, 500, NULL),
    ('NCK-SLV925-45',    'Sterling Silver 925 Curb Chain Necklace 45 cm', 'jewellery', 8900, 'EUR', 60, 120, 120, 40, '711311', 'IT', NULL, NULL, NULL, NULL),
    ('RNG-AU750-3MM',    '18 ct Yellow Gold Band Ring, 3 mm', 'jewellery', 62000, 'EUR', 50, 80, 80, 60, '711319', 'IT', NULL, NULL, NULL, NULL),
    ('WCH-AUTO-40-STL',  'Automatic Diver Watch 40 mm, Stainless Steel', 'watch', 89000, 'CHF', 450, 150, 120, 100, '910221', 'CH', NULL, NULL, NULL, NULL),
    ('WCH-QTZ-36-LTH',   'Quartz Dress Watch 36 mm, Leather Strap', 'watch', 19500, 'CHF', 300, 150, 120, 100, '910211', 'CH', NULL, NULL, NULL, NULL),
    ('BAG-LTH-TOTE-TAN', 'Full-Grain Leather Tote Bag, Tan', 'accessories', 39000, 'EUR', 1300, 450, 350, 150, '420221', 'IT', NULL, NULL, NULL, NULL),
    ('SNG-POL-ACET-TRT', 'Polarised Acetate Sunglasses, Tortoiseshell', 'accessories', 16000, 'EUR', 200, 170, 70, 60, '900410', 'IT', NULL, NULL, NULL, NULL),
    ('BOK-BIRDS-GB-PB',  'A Field Guide to the Birds of Britain, Paperback', 'books', 1699, 'GBP', 600, 240, 170, 30, '490199', 'GB', NULL, NULL, NULL, NULL),
    ('ESP-MAN-15BAR',    'Manual Espresso Machine 15 bar, 1350 W', 'home_appliance', 34900, 'EUR', 6500, 400, 320, 380, '851671', 'IT', NULL, NULL, NULL, NULL),
    ('PAN-TRIPLY-28',    'Tri-Ply Stainless Steel Frying Pan 28 cm', 'home', 8900, 'EUR', 1400, 520, 300, 70, '732393', 'DE', NULL, NULL, NULL, NULL),
    ('HLM-BIKE-M-BLK',   'Road Cycling Helmet EN 1078, Size M, Black', 'sporting_goods', 8900, 'GBP', 400, 300, 230, 180, '650610', 'CN', NULL, NULL, NULL, NULL),
    ('MAT-YOGA-6MM',     'Natural Rubber Yoga Mat 6 mm', 'sporting_goods', 7900, 'USD', 2500, 620, 150, 150, '950691', 'TW', NULL, NULL, NULL, NULL);

-- Stock: most lines are plentiful; a few are scarce (laptop, drone, gold
-- ring, automatic watch) and the down jacket is sold out, so OUT_OF_STOCK
-- is reachable with sample data.
INSERT INTO catalog_stock (sku, on_hand)
SELECT sku, CASE sku
    WHEN 'NBK-14AIR-16-512' THEN 5
    WHEN 'DRN-MINI249-GRY' THEN 3
    WHEN 'RNG-AU750-3MM' THEN 2
    WHEN 'WCH-AUTO-40-STL' THEN 1
    WHEN 'JKT-DOWN-M-BLK' THEN 0
    WHEN 'ESP-MAN-15BAR' THEN 12
    ELSE 250 END
FROM catalog_products;

-- +goose Down
DELETE FROM catalog_stock;
DELETE FROM catalog_products;
